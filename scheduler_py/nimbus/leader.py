"""Finding the leader Nimbus among ``nimbus.seeds``.

Storm runs several Nimbus daemons for high availability; one is the leader and only it
schedules and accepts topology changes. A client knows only the seeds (``nimbus.seeds`` and
``nimbus.thrift.port`` of ``storm.yaml``, :mod:`scheduler_py.config.storm_conf`). Storm's own
client (storm-client ``NimbusClient.getConfiguredClientAs``) asks the seeds in order for
``getLeader()`` and connects to the host and port that answer names. :func:`find_leader` does
the same with the question passed in, so the rule is tested without a Nimbus
(tests/test_storm_conf_leader.py); one difference: a seed that answers without a leader (it
is starting, or an election is running) does not end the search, the next seed is asked too.

:func:`seed_order` puts the last leader found first, so a steady cluster costs one question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

Address = tuple[str, int]


class NimbusLeaderNotFound(ConnectionError):
    """No seed named a leader; the message lists what each seed said (an ``OSError``, so a
    command reports it as an unreachable service)."""


@dataclass(frozen=True)
class LeaderAnswer:
    """What one seed said: the leader's address, or ``None`` when it knows none."""

    leader: Address | None


def find_leader(
    seeds: Sequence[Address], ask: Callable[[Address], LeaderAnswer]
) -> tuple[Address, list[str]]:
    """The leader's address and, for the log, what the seeds before it said.

    ``ask(seed)`` calls ``getLeader`` on one seed; any exception it raises means the seed is
    unreachable and the next one is asked. Raises :class:`NimbusLeaderNotFound` when no seed
    names a leader."""
    if not seeds:
        raise NimbusLeaderNotFound(
            "no Nimbus seeds to ask: expected nimbus.seeds in storm.yaml or --nimbus HOST:PORT"
        )
    notes: list[str] = []
    for seed in seeds:
        try:
            answer = ask(seed)
        except Exception as error:  # a dead seed is expected: the next one is asked
            notes.append(f"{_text(seed)}: {type(error).__name__}: {error}")
            continue
        if answer.leader is None:
            notes.append(f"{_text(seed)}: knows no leader")
            continue
        return answer.leader, notes
    raise NimbusLeaderNotFound(
        f"no Nimbus leader among the seeds {', '.join(_text(s) for s in seeds)} "
        f"({'; '.join(notes)}); is Nimbus running? Check nimbus.seeds and nimbus.thrift.port "
        "in storm.yaml, or pass --nimbus HOST:PORT"
    )


def seed_order(seeds: Iterable[Address], last_leader: Address | None) -> list[Address]:
    """``seeds`` with ``last_leader`` first (added when it is not a seed: a leader may be a
    Nimbus the seeds only named), each address once."""
    ordered = [last_leader] if last_leader else []
    ordered += [seed for seed in seeds if seed != last_leader]
    return ordered


def parse_addresses(text: str, default_port: int) -> tuple[Address, ...]:
    """``"nimbus1:6627,nimbus2"`` → ``(("nimbus1", 6627), ("nimbus2", default_port))``."""
    addresses = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep:
            addresses.append((item, default_port))
            continue
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"expected HOST[:PORT][,HOST[:PORT]...], found {text!r}")
        addresses.append((host, int(port)))
    if not addresses:
        raise ValueError(f"expected HOST[:PORT][,HOST[:PORT]...], found {text!r}")
    return tuple(addresses)


def _text(address: Address) -> str:
    return f"{address[0]}:{address[1]}"
