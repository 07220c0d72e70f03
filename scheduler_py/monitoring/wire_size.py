"""A topology's tuple size on the wire, from the workers' Netty totals and the pair estimate.

Counts mode runs nothing per tuple, so no tuple is ever sized (contract §1.2, "Not
counted"). Each worker's monitor does publish two totals per window (contract §1.1): the
messages its Netty clients sent to other workers (``netty_sent_messages``, Storm's
``__send-iconnection-sent-*`` gauges) and the bytes its Netty client threads wrote
(``netty_written_bytes``). Those messages are of two kinds: user tuples crossing workers,
and Storm's acking messages (``__ack_init`` to an acker, ``__ack_ack`` from a bolt to an
acker and from the acker back to the spout). The pair estimate
(``monitoring/pair_estimate.py``) says how many user tuples cross workers per second; the
rest of the messages are taken to be acking ones, of :data:`ACK_MESSAGE_BYTES` each. So::

    user tuple bytes = (written - (sent - crossing) × ACK_MESSAGE_BYTES) / crossing

over the window, summed over the topology's workers. The throughput model's ``payload``
(``model/throughput.py``) is that less Storm's per-message framing
(:data:`TASK_MESSAGE_FRAMING`), which the model's own ``framing_bytes`` stands for.

It is an estimate with known biases: each message batch ends with a 2-byte mark, the client
threads also write SASL tokens and TLS records when those are on (Storm's load reports and
control messages leave through the servers' threads, ``messaging/netty/Server.java``), and
the crossing user tuples come from the counts' estimate (Storm samples 1 in 20 emits by
default). Below
:data:`MIN_CROSSING_PER_S` user tuples crossing workers per second — a topology in one worker,
or nearly idle — there is nothing to divide, and the size stays unknown.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scheduler_py.monitoring.records import WindowRecord

TASK_MESSAGE_FRAMING = 6.0
"""bytes Storm adds per message in a batch: the 2-byte task id and the 4-byte length
(storm-client ``messaging/netty/MessageBatch.java``)"""
ACK_MESSAGE_BYTES = 36.0
"""bytes of one acking message on the wire, framing and the batch's end mark included: a
source task and stream (var-ints), an empty message id, and two or three values — the tuple
tree's 64-bit id and an XOR of ids, plus the spout task on ``__ack_init`` — each a Kryo class
id and a var-long (storm-client ``serialization/KryoTupleSerializer.java``,
``daemon/Acker.java``). Measured on the emulated cluster
(``docs/results/emulated-network/throughput-default/README.md``, eighth set): 29 B per message
from a worker running only the acker (its completions to the spouts), 37–38 B from workers
running only a sink bolt (their acks); a spout tuple through three bolts sends one init, three
bolt acks and one completion, 36 B on average."""
MIN_CROSSING_PER_S = 1.0
"""user tuples crossing workers per second below which the size is not estimated"""


@dataclass(frozen=True)
class WireSize:
    """The Netty totals of a topology's workers and what they say of its tuples."""

    sent_per_s: float
    """messages its workers' Netty clients sent per second"""
    written_per_s: float
    """bytes its workers' Netty client threads wrote per second"""
    crossing_per_s: float
    """user tuples crossing workers per second (the pair estimate)"""
    workers: int
    """workers whose records carried both totals"""

    @property
    def acking_per_s(self) -> float:
        """messages per second that were not user tuples (taken to be acking messages)"""
        return max(0.0, self.sent_per_s - self.crossing_per_s)

    @property
    def tuple_bytes(self) -> float | None:
        """bytes one user tuple takes on the wire, framing included; ``None`` when there is
        too little traffic between workers to tell"""
        if self.crossing_per_s < MIN_CROSSING_PER_S or self.written_per_s <= 0:
            return None
        user_bytes = self.written_per_s - self.acking_per_s * ACK_MESSAGE_BYTES
        return max(TASK_MESSAGE_FRAMING, user_bytes / self.crossing_per_s)

    @property
    def payload_bytes(self) -> float | None:
        """:attr:`tuple_bytes` less Storm's per-message framing: the throughput model's
        payload"""
        size = self.tuple_bytes
        return None if size is None else max(1.0, size - TASK_MESSAGE_FRAMING)

    def document_fields(self) -> dict[str, float | int]:
        """The aggregate's ``wire`` fields (contract §4)."""
        fields: dict[str, float | int] = {
            "sent_messages_per_s": round(self.sent_per_s, 3),
            "written_bytes_per_s": round(self.written_per_s, 1),
            "crossing_tuples_per_s": round(self.crossing_per_s, 3),
            "workers": self.workers,
        }
        payload = self.payload_bytes
        if payload is not None:
            fields["payload_bytes"] = round(payload, 1)
        return fields


def wire_size(
    records: Sequence[WindowRecord],
    tuples_per_s: Mapping[tuple[int, int], float],
) -> WireSize | None:
    """The :class:`WireSize` of one topology's records in the window, given the estimated
    tuples/s per (source task, target task) — ``None`` when no record carries both Netty
    totals (older monitors, the first window of a worker). Only the user tuples sent by
    workers whose records carried the totals are counted as crossing."""
    worker_of: dict[int, str] = {}
    component_of: dict[int, str] = {}
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for record in records:
        worker = record.worker
        for executor in record.executors:
            for task in executor.tasks:
                worker_of[task] = worker
                component_of[task] = executor.component
        if record.netty_sent_messages is None or record.netty_written_bytes is None:
            continue
        entry = totals[worker]
        entry[0] += record.netty_sent_messages
        entry[1] += record.netty_written_bytes
        entry[2] += (record.window_end_ms - record.window_start_ms) / 1000.0
    if not totals:
        return None
    sent = sum(s / seconds for s, _, seconds in totals.values() if seconds > 0)
    written = sum(w / seconds for _, w, seconds in totals.values() if seconds > 0)
    crossing = 0.0
    for (src, dst), rate in tuples_per_s.items():
        if _system(component_of.get(src)) or _system(component_of.get(dst)):
            continue
        sender = worker_of.get(src)
        if sender in totals and dst in worker_of and worker_of[dst] != sender:
            crossing += rate
    return WireSize(sent, written, crossing, len(totals))


def _system(component: str | None) -> bool:
    """Storm's own components (``__acker``, ``__system``, …) and unknown tasks."""
    return component is None or component.startswith("__")
