"""Count bolt: running count per word; fields grouping sends a word to the same task."""

import os
from collections import Counter
from typing import ClassVar

from streamparse import Bolt


class WordCountBolt(Bolt):
    outputs: ClassVar[list[str]] = ["word", "count"]

    def initialize(self, conf, ctx):
        self.counter = Counter()
        self.total = 0
        self.pid = os.getpid()

    def process(self, tup):
        word = tup.values[0]
        self.counter[word] += 1
        self.total += 1
        if self.total % 10000 == 0:
            self.logger.info(
                "counted %d words (%d distinct) [pid=%d]", self.total, len(self.counter), self.pid
            )
        self.emit([word, self.counter[word]])
