"""Split bolt: one tuple per word of the sentence (anchored to the sentence, auto-acked).

Optional load knob: before splitting, burn ``split_cpu_ms`` milliseconds of process CPU
time per sentence (conf ``wordcount.split.cpu.ms``, default 0; overridden at runtime by the
``split_cpu_ms`` key of the JSON file named by ``wordcount.control.file``, checked at most
once per second).
"""

from typing import ClassVar

from knobs import CONTROL_FILE_KEY, SPLIT_CPU_KEY, ControlFile, burn_cpu, conf_float, conf_path
from streamparse import Bolt


class SplitSentenceBolt(Bolt):
    outputs: ClassVar[list[str]] = ["word"]

    def initialize(self, conf, ctx):
        self.control = ControlFile(
            conf_path(conf, CONTROL_FILE_KEY),
            {"split_cpu_ms": conf_float(conf, SPLIT_CPU_KEY, 0.0)},
            logger=self.logger,
        )

    def process(self, tup):
        cpu_ms = self.control.get("split_cpu_ms")
        if cpu_ms > 0:
            burn_cpu(cpu_ms)
        for word in tup.values[0].split():
            self.emit([word])
