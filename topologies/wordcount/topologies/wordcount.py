"""Word count: sentence spout -> split bolt (shuffle) -> count bolt (fields grouping on word).

Acking is on end to end: the spout emits every sentence with a tuple id, the split
bolt anchors its words to the sentence and the count bolt acks each word (streamparse
bolts auto-anchor and auto-ack).  Parallelism: 2 spouts, 3 splitters, 3 counters, on
3 workers with 3 ackers.

Every key of ``config`` can be overridden at submit time, e.g.
``sparse submit -o topology.workers=2 -o scheduler.brain.algorithm=td`` (``-o`` values are
YAML-parsed: ``50`` arrives as an int, ``/tmp/x/control.json`` as a string; the components
accept numbers or numeric strings).

Load and bookkeeping knobs (all optional; without them the topology behaves as before):

- ``wordcount.spout.interval.ms`` (20): at most one sentence per interval per spout task
  (0 = as fast as Storm asks).
- ``wordcount.split.cpu.ms`` (0): process CPU time the split bolt burns (hashing) per
  sentence, measured with ``time.process_time()``.
- ``wordcount.control.file`` (unset): path of a JSON object file, e.g.
  ``{"interval_ms": 5, "split_cpu_ms": 2.5}``, that the spout and the split bolt check at
  most once per second (mtime/size/inode) and that overrides the two settings above at
  runtime; a key left out takes the conf value; a missing or invalid file keeps the previous
  values (logged once).  Replace it atomically (write a temporary file, ``os.replace``).
  Keep ``split_cpu_ms`` x ``topology.max.spout.pending`` x spout tasks / split tasks well
  below ``topology.message.timeout.secs``, or queued sentences time out and are replayed.
- ``wordcount.ledger.dir`` (unset): each spout process appends ``E <id>`` (first emit),
  ``R <id>`` (replay after a fail), ``A <id>`` (ack), ``F <id>`` (fail) lines, one unbuffered
  write each, to ``<dir>/sentences-<task>-<pid>-<start_ns>.ledger``; message ids are
  ``<task>-<pid>-<start_ns>-<seq>``.  ``tests/cluster/ledger.py`` reads them.
"""

from typing import ClassVar

from bolts.count import WordCountBolt
from bolts.split import SplitSentenceBolt
from spouts.words import SentenceSpout
from streamparse import Grouping, Topology


class WordCount(Topology):
    config: ClassVar[dict] = {
        "topology.workers": 3,
        "topology.acker.executors": 3,
        # bound the number of sentences in flight per spout task
        "topology.max.spout.pending": 200,
        "topology.message.timeout.secs": 30,
        # pause between two sentences of one spout task (0 = as fast as possible);
        # 20 ms = at most 50 sentences/s per spout task, so the demo leaves a
        # 2-core machine some CPU
        "wordcount.spout.interval.ms": 20,
        # CPU ms the split bolt burns per sentence (0 = none); see the module docstring
        "wordcount.split.cpu.ms": 0,
    }

    sentences = SentenceSpout.spec(name="sentences", par=2)
    split = SplitSentenceBolt.spec(name="split", inputs=[sentences], par=3)
    count = WordCountBolt.spec(name="count", inputs={split: Grouping.fields("word")}, par=3)
