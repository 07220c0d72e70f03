"""Linear's spout: emits ``[id, payload]`` tuples with a tuple id, replays them on fail.

At-least-once: a failed tuple is emitted again, same id, same values.  Message ids are
``<task>-<pid>-<start_ns>-<seq>``, unique across restarts of the spout's worker.

Topology conf (see ``topologies/linear.py``):

- ``linear.spout.interval.ms`` (5): at most one tuple per interval per task (0 = no pause);
- ``linear.payload.bytes`` (200): size of the payload string (ASCII, one byte a character).
"""

import os
import time
from typing import ClassVar

from linear_knobs import (
    DEFAULT_PAYLOAD_BYTES,
    DEFAULT_SPOUT_INTERVAL_MS,
    PAYLOAD_BYTES_KEY,
    SPOUT_INTERVAL_KEY,
    conf_float,
    conf_int,
    message_id,
    payload,
)
from streamparse import Spout

# Longest sleep of one next_tuple call: a long interval is waited out over several calls,
# so acks, fails and Storm's heartbeats keep flowing.
MAX_SLEEP_S = 0.1


class LinearSpout(Spout):
    outputs: ClassVar[list[str]] = ["id", "payload"]

    def initialize(self, stormconf, context):
        self.task_id = context.get("taskid")
        self.pid = os.getpid()
        self.start_ns = time.time_ns()
        self.interval_s = (
            conf_float(stormconf, SPOUT_INTERVAL_KEY, DEFAULT_SPOUT_INTERVAL_MS) / 1000.0
        )
        size = conf_int(stormconf, PAYLOAD_BYTES_KEY, DEFAULT_PAYLOAD_BYTES)
        self.payload = payload(size, seed=self.task_id or 0)
        self.last_emit = float("-inf")
        self.seq = 0
        self.pending = {}  # tuple id -> values, until acked
        self.acked = 0
        self.failed = 0

    def next_tuple(self):
        if self.interval_s > 0:
            wait = self.last_emit + self.interval_s - time.monotonic()
            if wait > 0:
                time.sleep(min(wait, MAX_SLEEP_S))
                if wait > MAX_SLEEP_S:
                    return
        self.seq += 1
        tup_id = message_id(self.task_id, self.pid, self.start_ns, self.seq)
        values = [tup_id, self.payload]
        self.pending[tup_id] = values
        self.emit(values, tup_id=tup_id)
        self.last_emit = time.monotonic()

    def ack(self, tup_id):
        if self.pending.pop(tup_id, None) is not None:
            self.acked += 1
            if self.acked % 10000 == 0:
                self.logger.info(
                    "task %s: %d tuples acked, %d failed, %d pending",
                    self.task_id,
                    self.acked,
                    self.failed,
                    len(self.pending),
                )

    def fail(self, tup_id):
        # replay: at-least-once processing
        self.failed += 1
        values = self.pending.get(tup_id)
        if values is not None:
            self.emit(values, tup_id=tup_id)
