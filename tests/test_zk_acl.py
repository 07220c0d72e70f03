"""Digest ACLs on the monitoring znodes (scheduler_py/monitoring/zk_acl.py), against a real
ZooKeeper: with a credential configured, our clients create every znode writable only with
it, and a client without it cannot overwrite, delete or plant an aggregate, a reference, a
window or live counters. The worker monitor's side is storm_plugin's ZkAclTest."""

from __future__ import annotations

import time
import uuid

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import make_digest_acl_credential

from scheduler_py.monitoring import zk_acl, znodes
from scheduler_py.monitoring.measured import ZooKeeperAggregates
from scheduler_py.monitoring.records import decode, encode
from scheduler_py.monitoring.zk import MonitorStore, close_quietly, connect
from tests.test_monitoring_zk import window

AGGREGATE = {"v": 1, "topology_id": "wc-1", "computed_at_ms": 1, "executors": [], "pairs": []}


def test_the_digest_id_is_zookeepers():
    assert zk_acl.Credential("u", "p").digest_id() == make_digest_acl_credential("u", "p")
    assert zk_acl.Credential("u", "p").digest_id() == "u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ="  # ZkAclTest


@pytest.mark.parametrize(
    ("text", "problem"), [("", "is empty"), ("justuser\n", "found no user or no password")]
)
def test_a_bad_credential_file_is_a_clear_error(tmp_path, monkeypatch, text, problem):
    path = tmp_path / "zk.digest"
    path.write_text(text)
    path.chmod(0o600)
    monkeypatch.setenv(zk_acl.DIGEST_FILE_ENV, str(path))
    with pytest.raises(zk_acl.CredentialError, match=problem):
        zk_acl.from_environment()
    monkeypatch.setenv(zk_acl.DIGEST_FILE_ENV, str(tmp_path / "missing"))
    with pytest.raises(zk_acl.CredentialError, match="does not exist"):
        zk_acl.from_environment()


def test_a_credential_file_other_users_can_read_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "zk.digest"
    path.write_text("scheduler:s3cret\n")
    path.chmod(0o644)
    monkeypatch.setenv(zk_acl.DIGEST_FILE_ENV, str(path))
    with pytest.raises(zk_acl.CredentialError, match="open to other users"):
        zk_acl.from_environment()


@pytest.fixture
def secured(zookeeper, tmp_path, monkeypatch):
    """A store under a root of its own whose client has the credential (from the environment,
    as every command gets it), and a stranger: a plain kazoo client without it."""
    secret = tmp_path / "zk.digest"
    secret.write_text("scheduler:s3cret\n")
    secret.chmod(0o600)
    monkeypatch.setenv(zk_acl.DIGEST_FILE_ENV, str(secret))
    client = connect(zookeeper.hosts)
    stranger = KazooClient(zookeeper.hosts)
    stranger.start(timeout=10)
    root = f"/test-acl-{uuid.uuid4().hex[:8]}"
    yield MonitorStore(client, root), stranger
    close_quietly(stranger)
    close_quietly(client)


def test_an_unauthenticated_client_cannot_overwrite_an_aggregate_or_live_counters(secured):
    store, stranger = secured
    store.write_aggregate("wc-1", AGGREGATE)
    store.write_reference("wc-1", AGGREGATE)
    window_path = store.publish_window(window("wc-1", "sup-a", 6700, 60_000, [(1, 1, "s", 1, 0)]))
    live = f"{znodes.live_path(store.root, 'wc-1')}/sup-a:6700"
    store.client.create(live, b'{"ts_ms": 1}', ephemeral=True, makepath=True)  # as a worker

    fake = encode(AGGREGATE | {"change": {"l1_relative": 9.9}})
    aggregate = store.aggregate_path("wc-1")
    assert decode(stranger.get(aggregate)[0]) == AGGREGATE  # the world may read
    for path in (aggregate, store.reference_path("wc-1"), window_path, live):
        with pytest.raises(NoAuthError):
            stranger.set(path, fake)
        with pytest.raises(NoAuthError):
            stranger.delete(path)
    for planted in (  # nor plant one for a topology that has none yet, parents included
        store.aggregate_path("other-2"),
        f"{znodes.live_path(store.root, 'wc-1')}/sup-b:6700",
        f"{store.monitor_path('wc-1', 'sup-a:6700')}/w-70000",
        f"{znodes.live_path(store.root)}/other-2",
        f"{store.root}/aggregate2",
    ):
        with pytest.raises(NoAuthError):
            stranger.create(planted, fake)
    assert store.read_aggregate("wc-1") == AGGREGATE
    assert store.read_aggregate("other-2") is None

    # the credential's own writers still rewrite and clean up
    store.write_aggregate("wc-1", AGGREGATE | {"computed_at_ms": 2})
    assert store.read_aggregate("wc-1")["computed_at_ms"] == 2
    store.delete_topology("wc-1")
    assert store.known_topologies() == set()


def test_the_brains_background_reader_authenticates(secured, zookeeper, monkeypatch):
    store, _ = secured
    monkeypatch.setenv(zk_acl.WORLD_READ_ENV, "false")
    private = MonitorStore(connect(zookeeper.hosts), store.root + "-private")
    try:
        private.write_aggregate("wc-1", AGGREGATE)
        stranger = KazooClient(zookeeper.hosts)
        stranger.start(timeout=10)
        try:
            with pytest.raises(NoAuthError):
                stranger.get(private.aggregate_path("wc-1"))
        finally:
            close_quietly(stranger)
        reader = ZooKeeperAggregates(zookeeper.hosts, private.root, cache_secs=0)
        try:
            reader.connect()  # connect_in_background, as the brain and the dashboard do
            deadline = time.monotonic() + 20
            while reader.aggregate("wc-1") is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert reader.aggregate("wc-1") == AGGREGATE, reader.missing_reason("wc-1")
        finally:
            reader.close()
    finally:
        private.delete_topology("wc-1")
        close_quietly(private.client)


def test_without_a_credential_nothing_changes(zookeeper, monkeypatch):
    monkeypatch.delenv(zk_acl.DIGEST_FILE_ENV, raising=False)
    client = connect(zookeeper.hosts)
    store = MonitorStore(client, f"/test-open-{uuid.uuid4().hex[:8]}")
    stranger = KazooClient(zookeeper.hosts)
    stranger.start(timeout=10)
    try:
        store.write_aggregate("wc-1", AGGREGATE)
        stranger.set(store.aggregate_path("wc-1"), encode(AGGREGATE))  # open, as before
        assert [a.id.scheme for a in client.get_acls(store.aggregate_path("wc-1"))[0]] == ["world"]
    finally:
        store.delete_topology("wc-1")
        close_quietly(stranger)
        close_quietly(client)
