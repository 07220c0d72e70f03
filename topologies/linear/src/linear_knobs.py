"""Pure helpers of the Linear topology: its conf keys, conf parsing, payloads, a CPU burner.

Shipped in the topology jar next to ``spouts/`` and ``bolts/`` (everything under ``src/``
goes to ``resources/``, which ``streamparse_run`` puts on ``sys.path`` in the worker), so the
components ``import linear_knobs``.  No streamparse import here.  (The name is not
``knobs``: word count has a ``knobs`` module, and the unit tests load both projects.)
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Mapping
from typing import Any

SPOUT_INTERVAL_KEY = "linear.spout.interval.ms"
BOLT_CPU_KEY = "linear.bolt.cpu.ms"
PAYLOAD_BYTES_KEY = "linear.payload.bytes"

DEFAULT_SPOUT_INTERVAL_MS = 5.0
DEFAULT_BOLT_CPU_MS = 0.0
DEFAULT_PAYLOAD_BYTES = 200

#: payload characters: ASCII, so the JSON multilang serializer sends one byte per character
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def conf_float(conf: Mapping[str, Any], key: str, default: float) -> float:
    """``conf[key]`` as a finite float >= 0; ``default`` when absent, null or not such a number.

    ``sparse submit -o key=value`` YAML-parses the value (``50`` -> int, ``0.5`` -> float,
    ``"50"`` -> str), so any of them is accepted via ``float(str(v))``.
    """
    value = conf.get(key)
    if value is None or isinstance(value, bool):
        return default
    try:
        number = float(str(value).strip())
    except ValueError:
        return default
    if not math.isfinite(number) or number < 0:
        return default
    return number


def conf_int(conf: Mapping[str, Any], key: str, default: int) -> int:
    """``conf[key]`` as an int >= 0 (a fraction is rounded down); ``default`` as in
    :func:`conf_float`."""
    return int(conf_float(conf, key, float(default)))


def payload(size: int, seed: int = 0) -> str:
    """``size`` ASCII characters (= bytes on the wire), starting at ``seed`` in the alphabet."""
    if size <= 0:
        return ""
    start = seed % len(_ALPHABET)
    pattern = _ALPHABET[start:] + _ALPHABET[:start]
    repeats = size // len(pattern) + 1
    return (pattern * repeats)[:size]


def burn_cpu(ms: float, *, batch: int = 64) -> int:
    """Hash until this process consumed ``ms`` milliseconds of CPU time; returns the rounds.

    Measured with ``time.process_time()``, so under contention it takes longer in wall time
    but the same CPU.  ``ms <= 0`` returns at once.
    """
    if ms <= 0:
        return 0
    end = time.process_time() + ms / 1000.0
    digest = b"linear"
    rounds = 0
    while time.process_time() < end:
        for _ in range(batch):
            digest = hashlib.sha256(digest).digest()
        rounds += 1
    return rounds


def message_id(task: object, pid: int, start_ns: int, seq: int) -> str:
    """A spout message id unique across restarts: ``<task>-<pid>-<start_ns>-<seq>``."""
    return f"{task}-{pid}-{start_ns}-{seq}"
