"""Sentence spout: cycles through a fixed corpus, emitting each sentence with a tuple id."""

import itertools
import time
from typing import ClassVar

from streamparse import Spout

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
    "the quick brown fox jumps over the lazy dog",
    "storm processes unbounded streams of tuples",
    "a scheduler places executors on worker slots",
]


class SentenceSpout(Spout):
    outputs: ClassVar[list[str]] = ["sentence"]

    def initialize(self, stormconf, context):
        self.task_id = context.get("taskid")
        # start each task at a different sentence
        offset = (self.task_id or 0) % len(SENTENCES)
        self.sentences = itertools.islice(itertools.cycle(SENTENCES), offset, None)
        self.interval = float(stormconf.get("wordcount.spout.interval.ms", 0) or 0) / 1000.0
        self.seq = 0
        self.pending = {}  # tuple id -> sentence, until acked
        self.acked = 0
        self.failed = 0

    def next_tuple(self):
        if self.interval:
            time.sleep(self.interval)
        self.seq += 1
        tup_id = f"{self.task_id}-{self.seq}"
        sentence = next(self.sentences)
        self.pending[tup_id] = sentence
        self.emit([sentence], tup_id=tup_id)

    def ack(self, tup_id):
        if self.pending.pop(tup_id, None) is not None:
            self.acked += 1
            if self.acked % 5000 == 0:
                self.logger.info(
                    "task %s: %d sentences acked, %d failed, %d pending",
                    self.task_id,
                    self.acked,
                    self.failed,
                    len(self.pending),
                )

    def fail(self, tup_id):
        # replay: at-least-once processing
        self.failed += 1
        sentence = self.pending.get(tup_id)
        if sentence is not None:
            self.emit([sentence], tup_id=tup_id)
