"""The Storm settings of a topology's conf that decide which placement is fastest, as the brain
reads them: the shim passes them on (``EXTRA_CONF_KEYS`` of
``storm_plugin/src/main/java/io/schedulerpy/storm/SnapshotBuilder.java``), JSON-decoded
(:func:`scheduler_py.scheduling.state.decode_conf`), so a value may be a bool, a number or the
text a user gave with ``-c``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler_py.config import keys

TRUE_TEXTS = ("true", "1", "yes")


def loadaware_messaging(conf: Mapping[str, Any]) -> bool:
    """Whether Storm routes the topology's shuffles locality-first: not when
    ``topology.disable.loadaware.messaging`` is true (Storm's default: false;
    ``scheduler_py/model/loadaware.py``)."""
    disabled = conf.get(keys.DISABLE_LOADAWARE.name, False)
    return not (disabled is True or str(disabled).strip().lower() in TRUE_TEXTS)


def max_spout_pending(conf: Mapping[str, Any]) -> int:
    """``topology.max.spout.pending``: tuples each spout executor keeps in flight; 0 when
    unset (Storm's default: unbounded) or not a whole number."""
    raw = conf.get(keys.MAX_SPOUT_PENDING.name)
    if raw in (None, "") or isinstance(raw, bool):
        return 0
    try:
        return max(0, int(raw))
    except (TypeError, ValueError):
        return 0
