"""Linear (R-Storm, paper 003 §6.3): spout -> bolt1 -> bolt2 -> bolt3, shuffle groupings.

The paper's micro-benchmark chain (``word`` -> ``exclaim1`` -> ``exclaim2`` ->
``exclaim_output_3``) as a streamparse topology: the spout emits ``[id, payload]`` with a
tuple id and replays it on fail; bolt1 and bolt2 burn CPU and forward the id with a payload
of the configured size; bolt3 is the sink.  Acking is on end to end (streamparse bolts
auto-anchor and auto-ack).  Parallelism: spout 2, each bolt 2, on 3 workers with 3 ackers.

Every key of ``config`` can be overridden at submit time, e.g.
``sparse submit -o linear.bolt.cpu.ms=2 -o scheduler.brain.algorithm=td`` (``-o`` values
are YAML-parsed; the components accept numbers or numeric strings).

- ``linear.spout.interval.ms`` (5): at most one tuple per interval per spout task (0 = as
  fast as Storm asks);
- ``linear.bolt.cpu.ms`` (0): process CPU time each bolt burns per tuple;
- ``linear.payload.bytes`` (200): size of the payload on every edge.
"""

from typing import ClassVar

from bolts.stage import SinkBolt, StageBolt
from spouts.source import LinearSpout
from streamparse import Topology


class Linear(Topology):
    config: ClassVar[dict] = {
        "topology.workers": 3,
        "topology.acker.executors": 3,
        # bound the number of tuples in flight per spout task
        "topology.max.spout.pending": 200,
        "topology.message.timeout.secs": 30,
        "linear.spout.interval.ms": 5,
        "linear.bolt.cpu.ms": 0,
        "linear.payload.bytes": 200,
    }

    spout = LinearSpout.spec(name="spout", par=2)
    bolt1 = StageBolt.spec(name="bolt1", inputs=[spout], par=2)
    bolt2 = StageBolt.spec(name="bolt2", inputs=[bolt1], par=2)
    bolt3 = SinkBolt.spec(name="bolt3", inputs=[bolt2], par=2)
