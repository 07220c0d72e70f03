"""Sentence spout: cycles through a fixed corpus, emitting each sentence with a tuple id.

At-least-once: a failed sentence is emitted again under the same id.  Message ids are
``<task>-<pid>-<start_ns>-<seq>``, unique across restarts of the spout's worker.

Optional topology conf (see ``topologies/wordcount.py``):

- ``wordcount.spout.interval.ms``: at most one sentence per interval per task (0 = no pause);
- ``wordcount.control.file``: JSON file whose ``interval_ms`` overrides it at runtime
  (checked at most once per second);
- ``wordcount.ledger.dir``: append ``E|R|A|F <id>`` lines to
  ``<dir>/<component>-<task>-<pid>-<start_ns>.ledger``.
"""

import itertools
import os
import time
from typing import ClassVar

from knobs import (
    CONTROL_FILE_KEY,
    LEDGER_DIR_KEY,
    SPOUT_INTERVAL_KEY,
    ControlFile,
    Ledger,
    conf_float,
    conf_path,
    message_id,
)
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

# Longest sleep of one next_tuple call: a long interval is waited out over several calls,
# so acks, fails and Storm's heartbeats keep flowing.
MAX_SLEEP_S = 0.1


class SentenceSpout(Spout):
    outputs: ClassVar[list[str]] = ["sentence"]

    def initialize(self, stormconf, context):
        self.task_id = context.get("taskid")
        component = context.get("componentid") or "sentences"
        self.pid = os.getpid()
        self.start_ns = time.time_ns()
        # start each task at a different sentence
        offset = (self.task_id or 0) % len(SENTENCES)
        self.sentences = itertools.islice(itertools.cycle(SENTENCES), offset, None)
        default_ms = conf_float(stormconf, SPOUT_INTERVAL_KEY, 0.0)
        self.control = ControlFile(
            conf_path(stormconf, CONTROL_FILE_KEY),
            {"interval_ms": default_ms},
            logger=self.logger,
        )
        ledger_dir = conf_path(stormconf, LEDGER_DIR_KEY)
        self.ledger = (
            Ledger(ledger_dir, component, self.task_id, self.pid, self.start_ns)
            if ledger_dir
            else None
        )
        if self.ledger is not None:
            self.logger.info("task %s: ledger %s", self.task_id, self.ledger.path)
        self.last_emit = float("-inf")
        self.seq = 0
        self.pending = {}  # tuple id -> sentence, until acked
        self.acked = 0
        self.failed = 0

    def _record(self, kind: str, tup_id: str) -> None:
        if self.ledger is not None:
            self.ledger.record(kind, str(tup_id))

    def next_tuple(self):
        interval = self.control.get("interval_ms") / 1000.0
        if interval > 0:
            wait = self.last_emit + interval - time.monotonic()
            if wait > 0:
                time.sleep(min(wait, MAX_SLEEP_S))
                if wait > MAX_SLEEP_S:
                    return
        self.seq += 1
        tup_id = message_id(self.task_id, self.pid, self.start_ns, self.seq)
        sentence = next(self.sentences)
        self.pending[tup_id] = sentence
        self._record("E", tup_id)  # before the emit: an ack can never precede its E line
        self.emit([sentence], tup_id=tup_id)
        self.last_emit = time.monotonic()

    def ack(self, tup_id):
        self._record("A", tup_id)
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
        self._record("F", tup_id)
        self.failed += 1
        sentence = self.pending.get(tup_id)
        if sentence is not None:
            self._record("R", tup_id)
            self.emit([sentence], tup_id=tup_id)
