"""Forwarding Nimbus's assignments to a supervisor byte for byte
(``scheduler_py/nimbus/supervisor_sync.py``, ``scheduler_py/nimbus/raw_thrift.py``).

Nimbus is played by a thriftpy2 server speaking the relevant part of Storm's IDL (below, field
ids and types as in storm-client ``storm.thrift``); the supervisor by a raw socket server that
records the frame it receives, because the point is that nothing decodes the assignment on
the way: ``executor_node_port`` is keyed by lists."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable

import pytest
import thriftpy2
from thriftpy2.protocol import TBinaryProtocolFactory
from thriftpy2.rpc import make_server
from thriftpy2.transport import TFramedTransportFactory
from thriftpy2.utils import serialize

from scheduler_py.nimbus import raw_thrift
from scheduler_py.nimbus.supervisor_sync import SupervisorSyncError, sync_supervisor

STORM_SUBSET = """
exception AuthorizationException { 1: required string msg; }
struct NodeInfo { 1: required string node; 2: required set<i64> port; }
struct Assignment {
  1: required string master_code_dir;
  2: optional map<string, string> node_host = {};
  3: optional map<list<i64>, NodeInfo> executor_node_port = {};
}
struct SupervisorAssignments { 1: optional map<string, Assignment> storm_assignment = {}; }
service Nimbus {
  SupervisorAssignments getSupervisorAssignments(1: string node)
    throws (1: AuthorizationException aze);
}
"""


@pytest.fixture(scope="module")
def idl(tmp_path_factory):
    path = tmp_path_factory.mktemp("idl") / "storm_subset.thrift"
    path.write_text(STORM_SUBSET)
    return thriftpy2.load(str(path), module_name="storm_subset_thrift")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _assignments(idl):
    node = idl.NodeInfo(node="sup-2", port={6701})
    assignment = idl.Assignment(
        master_code_dir="/tmp/storm",
        node_host={"sup-2": "198.18.0.2"},
        executor_node_port={(3, 3): node, (4, 5): node},
    )
    return idl.SupervisorAssignments(storm_assignment={"wc-1-1": assignment})


class FakeNimbus:
    def __init__(self, answer: Callable[[str], object]):
        self.answer = answer
        self.asked: list[str] = []

    def getSupervisorAssignments(self, node):
        self.asked.append(node)
        return self.answer(node)


def _serve_nimbus(idl, handler) -> tuple[object, int]:
    port = _free_port()
    server = make_server(
        idl.Nimbus,
        handler,
        "127.0.0.1",
        port,
        proto_factory=TBinaryProtocolFactory(),
        trans_factory=TFramedTransportFactory(),
    )
    threading.Thread(target=server.serve, daemon=True).start()
    _wait_listening(port)
    return server, port


def _wait_listening(port: int) -> None:
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            threading.Event().wait(0.02)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port} after 4 s")


class RawSupervisor:
    """Accepts one connection, records the frame, answers with ``reply(frame)``."""

    def __init__(self, reply: Callable[[bytes], bytes]):
        self.reply = reply
        self.frames: list[bytes] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        connection, _ = self.listener.accept()
        with connection:
            size = struct.unpack(">i", _recv(connection, 4))[0]
            frame = _recv(connection, size)
            self.frames.append(frame)
            connection.sendall(self.reply(frame))

    def close(self) -> None:
        self.listener.close()


def _recv(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        assert chunk, "the client closed the connection early"
        data += chunk
    return data


def void_reply(frame: bytes) -> bytes:
    """A REPLY to the call in ``frame`` with an empty result struct (a ``void`` method)."""
    name_length = struct.unpack(">i", frame[4:8])[0]
    name = frame[8 : 8 + name_length]
    seqid = frame[8 + name_length : 12 + name_length]
    body = struct.pack(">I", raw_thrift.VERSION_1 | raw_thrift.REPLY)
    body += struct.pack(">i", len(name)) + name + seqid + bytes([raw_thrift.STOP])
    return struct.pack(">i", len(body)) + body


def test_the_supervisor_gets_exactly_the_bytes_nimbus_sent(idl):
    expected = _assignments(idl)
    nimbus = FakeNimbus(lambda node: expected)
    server, nimbus_port = _serve_nimbus(idl, nimbus)
    supervisor = RawSupervisor(void_reply)
    try:
        sync_supervisor("127.0.0.1", nimbus_port, "sup-1", "127.0.0.1", supervisor.port)
    finally:
        server.close()
        supervisor.close()
    assert nimbus.asked == ["sup-1"]
    (frame,) = supervisor.frames
    # a strict CALL of sendSupervisorAssignments whose argument 1 is the struct Nimbus encoded
    header = struct.unpack(">I", frame[:4])[0]
    assert header == raw_thrift.VERSION_1 | raw_thrift.CALL
    reader = raw_thrift._Reader(frame[4:])
    assert reader.string() == b"sendSupervisorAssignments"
    reader.i32()
    args = reader.fields()
    assert list(args) == [1] and args[1].type == raw_thrift.STRUCT
    assert args[1].value == serialize(expected, TBinaryProtocolFactory())


def test_a_refusal_by_nimbus_names_the_step_and_the_reason(idl):
    def refuse(node):
        raise idl.AuthorizationException(msg=f"{node} may not read assignments")

    server, nimbus_port = _serve_nimbus(idl, FakeNimbus(refuse))
    try:
        with pytest.raises(SupervisorSyncError, match=r"from Nimbus.*sup-1 may not read"):
            sync_supervisor("127.0.0.1", nimbus_port, "sup-1", "127.0.0.1", 1)
    finally:
        server.close()


def test_no_assignments_from_nimbus_is_an_error_not_an_empty_push(idl):
    # a Nimbus that is not the leader returns null: forwarding "nothing" would make the
    # supervisor kill every worker it runs
    server, nimbus_port = _serve_nimbus(idl, FakeNimbus(lambda node: None))
    supervisor = RawSupervisor(void_reply)
    try:
        with pytest.raises(SupervisorSyncError, match="returned no assignments"):
            sync_supervisor("127.0.0.1", nimbus_port, "sup-1", "127.0.0.1", supervisor.port)
    finally:
        server.close()
        supervisor.close()
    assert supervisor.frames == []


def test_garbage_from_the_supervisor_port_is_a_clear_error(idl):
    server, nimbus_port = _serve_nimbus(idl, FakeNimbus(lambda node: _assignments(idl)))
    http = RawSupervisor(lambda frame: b"HTTP/1.1 400 Bad Request\r\n\r\n")
    try:
        with pytest.raises(SupervisorSyncError, match=r"supervisor.thrift.port.*frame"):
            sync_supervisor("127.0.0.1", nimbus_port, "sup-1", "127.0.0.1", http.port)
    finally:
        server.close()
        http.close()


def test_nothing_listening_is_a_clear_error(idl):
    server, nimbus_port = _serve_nimbus(idl, FakeNimbus(lambda node: _assignments(idl)))
    try:
        with pytest.raises(SupervisorSyncError, match="could not hand supervisor sup-1"):
            sync_supervisor("127.0.0.1", nimbus_port, "sup-1", "127.0.0.1", _free_port())
    finally:
        server.close()


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\x0c\x00\x01", "expected 1 more byte"),  # a struct field cut short
        (b"\x0b\x00\x01\xff\xff\xff\xf0", "expected -16 more byte"),  # a negative length
        (b"\x0f\x00\x01\x08\x7f\xff\xff\xff", "collection element"),  # a huge list count
        (b"\x07\x00\x01\x00", "unknown Thrift type 7"),
        (b"\x0c\x00\x01" * 100, "nested deeper"),
    ],
)
def test_the_reader_refuses_malformed_structs(data, expected):
    with pytest.raises(raw_thrift.ThriftWireError, match=expected):
        raw_thrift._Reader(data).fields()


def test_a_reply_to_another_call_is_refused():
    frame = void_reply(raw_thrift.encode_call("other", 7, [])[4:])[4:]
    with pytest.raises(raw_thrift.ThriftWireError, match="reply to getSupervisorAssignments #1"):
        raw_thrift.decode_reply(frame, "getSupervisorAssignments", 1)
