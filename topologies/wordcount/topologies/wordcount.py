"""Word count: sentence spout -> split bolt (shuffle) -> count bolt (fields grouping on word).

Acking is on end to end: the spout emits every sentence with a tuple id, the split
bolt anchors its words to the sentence and the count bolt acks each word (streamparse
bolts auto-anchor and auto-ack).  Parallelism: 2 spouts, 3 splitters, 3 counters, on
3 workers with 3 ackers.

Every key of ``config`` can be overridden at submit time, e.g.
``sparse submit -o topology.workers=2 -o scheduler.brain.algorithm=td``.
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
    }

    sentences = SentenceSpout.spec(name="sentences", par=2)
    split = SplitSentenceBolt.spec(name="split", inputs=[sentences], par=3)
    count = WordCountBolt.spec(name="count", inputs={split: Grouping.fields("word")}, par=3)
