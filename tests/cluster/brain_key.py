"""The shim key of the cluster a test brain serves (tests/cluster/conftest.py ``start_brain``
sets ``$SCHEDULER_PY_SHIM_KEY_FILE`` to the key Nimbus seals its rounds with,
deploy/cluster-up.sh), so the test brains — faulty, slow, recording — check the rounds and
seal their answers as ``scheduler-py serve`` does: the shim applies only a reply sealed for its
round (scheduler_py/service/shim_auth.py)."""

from __future__ import annotations

import os
from pathlib import Path

from scheduler_py.service.shim_auth import KEY_FILE_ENV, ShimAuth, load_key


def cluster_shim_auth() -> ShimAuth | None:
    """:class:`ShimAuth` with the cluster's key; ``None`` when no key file is set (rounds are
    then opened unchecked and answered unsealed, for a shim without a key)."""
    path = os.environ.get(KEY_FILE_ENV)
    key = load_key(Path(path)) if path else None
    return ShimAuth(key) if key is not None else None
