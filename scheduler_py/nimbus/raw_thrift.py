"""A minimal Thrift client (framed transport, binary protocol) that passes struct values
through as raw bytes.

Why not thriftpy2 here: forwarding Nimbus's ``SupervisorAssignments`` to a supervisor
(:mod:`scheduler_py.nimbus.supervisor_sync`) means handling Storm's ``Assignment``, whose maps
are keyed by lists and structs (``executor_node_port: map<list<i64>, NodeInfo>``); a Python
decoder turns such keys into unhashable values. The assignment does not need decoding at all:
Nimbus's answer is sent on to the supervisor byte for byte, the same bytes the supervisor
would fetch itself (storm-client ``storm.thrift``: ``Nimbus.getSupervisorAssignments``,
``Supervisor.sendSupervisorAssignments``).

Wire format (Apache Thrift's binary protocol, strict mode, inside 4-byte length frames as
Storm's ``TFramedTransport`` sends them): a message is ``i32 (0x80010000 | type)``, the method
name as ``i32 length + UTF-8``, ``i32 seqid``, then one struct: fields of ``byte type, i16
id, value`` up to a ``STOP`` byte. Every length read from the peer is checked against the
bytes received, so garbage raises :class:`ThriftWireError` instead of reading past the end.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

STOP, BOOL, BYTE, DOUBLE, I16, I32, I64, STRING, STRUCT, MAP, SET, LIST = (
    0,
    2,
    3,
    4,
    6,
    8,
    10,
    11,
    12,
    13,
    14,
    15,
)
CALL, REPLY, EXCEPTION = 1, 2, 3
VERSION_1 = 0x80010000
FIXED_SIZE = {BOOL: 1, BYTE: 1, DOUBLE: 8, I16: 2, I32: 4, I64: 8}
MAX_FRAME_BYTES = 64 * 1024 * 1024
"""refuse a reply frame larger than this (Storm's default ``nimbus.thrift.max_buffer_size``
is 1 MiB; a supervisor's assignments are far below this)"""
MAX_DEPTH = 64


class ThriftWireError(ValueError):
    """The peer's bytes are not the Thrift message expected; the message says what was."""


class ThriftCallError(RuntimeError):
    """The peer answered with a Thrift application exception or a declared exception."""


@dataclass(frozen=True)
class Field:
    """One struct field as it travels: its id, its Thrift type and its encoded value."""

    id: int
    type: int
    value: bytes


def string_field(field_id: int, text: str) -> Field:
    data = text.encode("utf-8")
    return Field(field_id, STRING, struct.pack(">i", len(data)) + data)


def encode_call(method: str, seqid: int, args: list[Field]) -> bytes:
    """One framed CALL message whose arguments struct holds ``args``."""
    name = method.encode("utf-8")
    body = bytearray(struct.pack(">I", VERSION_1 | CALL))
    body += struct.pack(">i", len(name)) + name + struct.pack(">i", seqid)
    for arg in args:
        body += struct.pack(">bh", arg.type, arg.id) + arg.value
    body.append(STOP)
    return struct.pack(">i", len(body)) + bytes(body)


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise ThriftWireError(
                f"expected {size} more byte(s) at offset {self.pos}, found "
                f"{len(self.data) - self.pos} (truncated or not a Thrift binary message)"
            )
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def i8(self) -> int:
        return struct.unpack(">b", self.take(1))[0]

    def i16(self) -> int:
        return struct.unpack(">h", self.take(2))[0]

    def i32(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def string(self) -> bytes:
        return self.take(self.i32())

    def skip(self, ftype: int, depth: int = 0) -> None:
        """Move past one value of type ``ftype``."""
        if depth > MAX_DEPTH:
            raise ThriftWireError(f"values nested deeper than {MAX_DEPTH} levels")
        if ftype in FIXED_SIZE:
            self.take(FIXED_SIZE[ftype])
        elif ftype == STRING:
            self.string()
        elif ftype == STRUCT:
            while (field_type := self.i8()) != STOP:
                self.i16()
                self.skip(field_type, depth + 1)
        elif ftype == MAP:
            key_type, value_type, size = self.i8(), self.i8(), self.i32()
            self._check_count(size)
            for _ in range(size):
                self.skip(key_type, depth + 1)
                self.skip(value_type, depth + 1)
        elif ftype in (SET, LIST):
            element_type, size = self.i8(), self.i32()
            self._check_count(size)
            for _ in range(size):
                self.skip(element_type, depth + 1)
        else:
            raise ThriftWireError(f"unknown Thrift type {ftype} at offset {self.pos}")

    def _check_count(self, size: int) -> None:
        if size < 0 or size > len(self.data) - self.pos:
            raise ThriftWireError(
                f"expected at most {len(self.data) - self.pos} collection element(s) in the "
                f"rest of the frame, found a count of {size}"
            )

    def fields(self) -> dict[int, Field]:
        """The fields of the struct starting here, each value kept as raw bytes."""
        found: dict[int, Field] = {}
        while (field_type := self.i8()) != STOP:
            field_id = self.i16()
            start = self.pos
            self.skip(field_type)
            found[field_id] = Field(field_id, field_type, self.data[start : self.pos])
        return found


def decode_reply(frame: bytes, method: str, seqid: int) -> dict[int, Field]:
    """The result struct's fields of one REPLY frame body; raises :class:`ThriftCallError`
    for an EXCEPTION message."""
    reader = _Reader(frame)
    header = reader.i32() & 0xFFFFFFFF
    if header & 0xFFFF0000 != VERSION_1:
        raise ThriftWireError(
            f"expected a strict binary-protocol message header 0x8001xxxx, found {header:#010x}"
        )
    kind = header & 0xFF
    name = reader.string().decode("utf-8", errors="replace")
    got_seqid = reader.i32()
    if name != method or got_seqid != seqid:
        raise ThriftWireError(f"expected the reply to {method} #{seqid}, found {name} #{got_seqid}")
    result = reader.fields()
    if kind == EXCEPTION:
        message = result.get(1)
        text = ""
        if message is not None and message.type == STRING:
            text = _Reader(message.value).string().decode("utf-8", errors="replace")
        raise ThriftCallError(f"{method} failed on the peer: {text or 'TApplicationException'}")
    if kind != REPLY:
        raise ThriftWireError(f"expected a REPLY (2) to {method}, found message type {kind}")
    return result


def call(
    host: str, port: int, method: str, args: list[Field], timeout_secs: float, seqid: int = 1
) -> dict[int, Field]:
    """Send one call on a fresh connection and return the fields of its result struct (field
    0 is the return value, others are declared exceptions)."""
    with socket.create_connection((host, port), timeout=timeout_secs) as sock:
        sock.sendall(encode_call(method, seqid, args))
        size = struct.unpack(">i", _recv_exactly(sock, 4))[0]
        if not 0 < size <= MAX_FRAME_BYTES:
            raise ThriftWireError(
                f"expected a reply frame of 1..{MAX_FRAME_BYTES} bytes from {host}:{port}, "
                f"found a length of {size} (is this a Thrift framed-transport port?)"
            )
        return decode_reply(_recv_exactly(sock, size), method, seqid)


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 16))
        if not chunk:
            raise ThriftWireError(
                f"the peer closed the connection after {len(chunks)} of {size} byte(s)"
            )
        chunks += chunk
    return bytes(chunks)


def exception_text(result_field: Field) -> str:
    """The ``msg`` (field 1) of a declared exception struct such as Storm's
    ``AuthorizationException``, or a placeholder."""
    if result_field.type != STRUCT:
        return f"exception field {result_field.id}"
    fields = _Reader(result_field.value).fields()
    message = fields.get(1)
    if message is None or message.type != STRING:
        return f"exception field {result_field.id}"
    return _Reader(message.value).string().decode("utf-8", errors="replace")
