"""Linear's bolts: a stage that burns CPU and forwards ``[id, payload]``, and the sink.

Both anchor to and ack their input tuple (streamparse's auto-anchor/auto-ack), so a tuple
tree ends when the sink has processed it.

Topology conf (see ``topologies/linear.py``):

- ``linear.bolt.cpu.ms`` (0): process CPU time each bolt burns (hashing) per tuple;
- ``linear.payload.bytes`` (200): size of the payload a stage forwards (its own, not the
  input's: every edge carries the configured size).
"""

from typing import ClassVar

from linear_knobs import (
    BOLT_CPU_KEY,
    DEFAULT_BOLT_CPU_MS,
    DEFAULT_PAYLOAD_BYTES,
    PAYLOAD_BYTES_KEY,
    burn_cpu,
    conf_float,
    conf_int,
    payload,
)
from streamparse import Bolt


class _Burner(Bolt):
    def initialize(self, conf, ctx):
        self.task_id = ctx.get("taskid")
        self.cpu_ms = conf_float(conf, BOLT_CPU_KEY, DEFAULT_BOLT_CPU_MS)
        self.processed = 0

    def _work(self, tup):
        if self.cpu_ms > 0:
            burn_cpu(self.cpu_ms)
        self.processed += 1
        if self.processed % 10000 == 0:
            self.logger.info("task %s: %d tuples processed", self.task_id, self.processed)


class StageBolt(_Burner):
    """bolt1, bolt2: burn ``linear.bolt.cpu.ms``, forward the id with a fresh payload."""

    outputs: ClassVar[list[str]] = ["id", "payload"]

    def initialize(self, conf, ctx):
        super().initialize(conf, ctx)
        size = conf_int(conf, PAYLOAD_BYTES_KEY, DEFAULT_PAYLOAD_BYTES)
        self.payload = payload(size, seed=self.task_id or 0)

    def process(self, tup):
        self._work(tup)
        self.emit([tup.values[0], self.payload])


class SinkBolt(_Burner):
    """bolt3: burn ``linear.bolt.cpu.ms`` and end the tuple tree (emits nothing)."""

    outputs: ClassVar[list[str]] = []

    def process(self, tup):
        self._work(tup)
