"""Split bolt: one tuple per word of the sentence (anchored to the sentence, auto-acked)."""

from typing import ClassVar

from streamparse import Bolt


class SplitSentenceBolt(Bolt):
    outputs: ClassVar[list[str]] = ["word"]

    def process(self, tup):
        for word in tup.values[0].split():
            self.emit([word])
