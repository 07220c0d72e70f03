"""Host → rack mapping, in the convention of Storm's ``storm.network.topography.plugin``.

Storm asks a ``DNSToSwitchMapping`` plugin to ``resolve(hostnames) -> {hostname: rack}`` and
builds ``Cluster.getNetworkTopography()`` (rack → hostnames) from the answer. The stock
plugins are reproduced here:

* :func:`default_mapping` — ``DefaultRackDNSToSwitchMapping``: every host in one rack
  (Storm names it ``/default-rack``; the model's :class:`~scheduler_py.model.types.Node`
  default is ``default-rack``, which is what this module uses unless told otherwise);
* :func:`alternate_mapping` — ``org.apache.storm.testing.AlternateRackDNSToSwitchMapping``:
  sorted host names alternate between ``RACK1`` and ``RACK2``;
* :class:`RackMapping` — a table (a dict, or a file loaded by :func:`load_rack_mapping`)
  with a default rack for hosts it does not name, like Hadoop's ``TableMapping`` that
  Storm users usually copy.

:func:`apply_racks` writes the racks into the model's nodes (``Node.rack``), which is the
only place the algorithms read them from (R-Storm's network distance,
``docs/algorithms/003-rstorm.md`` §2.4).

File formats accepted by :func:`load_rack_mapping` (detected from the content):

* text, one ``host rack`` pair per line (whitespace separated; ``#`` starts a comment) —
  the Hadoop ``net.topology.table.file.name`` format;
* JSON object ``{"host": "rack", ...}``;
* JSON object ``{"rack": ["host", ...], ...}`` — the shape of Storm's
  ``getNetworkTopography()``;
* JSON ``{"ClusterInfo": [{"cluster": "1", "nodes": ["host", ...]}, ...]}`` — the R-Storm
  prototype's ``data/NetworkData`` file (``docs/algorithms/003-rstorm.md`` §2.4).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

from scheduler_py.model.errors import InvalidProblemError
from scheduler_py.model.types import Node

DEFAULT_RACK = Node.__dataclass_fields__["rack"].default
"""The rack of a host no mapping names: the model's default (``default-rack``)."""

STORM_DEFAULT_RACK = "/default-rack"
"""``DNSToSwitchMapping.DEFAULT_RACK`` in Storm."""


@dataclass(frozen=True)
class RackMapping:
    """A host → rack table with a default for unknown hosts (a ``DNSToSwitchMapping``)."""

    racks: Mapping[str, str] = field(default_factory=dict)
    default: str = DEFAULT_RACK

    def __post_init__(self) -> None:
        object.__setattr__(self, "racks", MappingProxyType(dict(self.racks)))
        for host, rack in self.racks.items():
            if not host or not rack:
                raise InvalidProblemError(
                    f"rack mapping: empty host or rack name in pair ({host!r}, {rack!r})"
                )

    def rack_of(self, host: str) -> str:
        return self.racks.get(host, self.default)

    def resolve(self, hosts: Iterable[str]) -> dict[str, str]:
        """Storm's ``DNSToSwitchMapping.resolve``: every host → its rack."""
        return {host: self.rack_of(host) for host in hosts}

    def topography(self, hosts: Iterable[str]) -> dict[str, list[str]]:
        """``Cluster.getNetworkTopography()``: rack → sorted hosts, for the given hosts."""
        result: dict[str, list[str]] = {}
        for host, rack in sorted(self.resolve(hosts).items()):
            result.setdefault(rack, []).append(host)
        return dict(sorted(result.items()))


def default_mapping(default: str = DEFAULT_RACK) -> RackMapping:
    """``DefaultRackDNSToSwitchMapping``: one rack for every host."""
    return RackMapping({}, default)


def alternate_mapping(hosts: Iterable[str]) -> RackMapping:
    """``AlternateRackDNSToSwitchMapping``: sorted hosts alternate ``RACK1``, ``RACK2``."""
    ordered = sorted(set(hosts))
    return RackMapping({h: "RACK1" if i % 2 == 0 else "RACK2" for i, h in enumerate(ordered)})


def mapping_from_topography(topography: Mapping[str, Iterable[str]]) -> RackMapping:
    """The inverse of :meth:`RackMapping.topography` (rack → hosts); a host in two racks is
    an error."""
    racks: dict[str, str] = {}
    for rack, hosts in topography.items():
        if isinstance(hosts, str):
            raise InvalidProblemError(
                f"rack mapping: rack {rack!r} must list hosts, found the string {hosts!r}"
            )
        for host in hosts:
            if host in racks and racks[host] != rack:
                raise InvalidProblemError(
                    f"rack mapping: host {host!r} is in racks {racks[host]!r} and {rack!r}"
                )
            racks[str(host)] = str(rack)
    return RackMapping(racks)


def parse_rack_mapping(text: str, *, default: str = DEFAULT_RACK) -> RackMapping:
    """Parse any of the formats listed in the module docstring."""
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as error:
            raise InvalidProblemError(f"rack mapping: invalid JSON: {error}") from error
        return replace(_from_json(data), default=default)
    racks: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        content = raw.split("#", 1)[0].strip()
        if not content:
            continue
        parts = content.split()
        if len(parts) != 2:
            raise InvalidProblemError(
                f"rack mapping line {number}: expected 'host rack', found {raw.strip()!r}"
            )
        host, rack = parts
        if host in racks and racks[host] != rack:
            raise InvalidProblemError(
                f"rack mapping line {number}: host {host!r} already in rack {racks[host]!r}"
            )
        racks[host] = rack
    return RackMapping(racks, default)


def _from_json(data: object) -> RackMapping:
    if isinstance(data, Mapping) and "ClusterInfo" in data:
        clusters = data["ClusterInfo"]
        if not isinstance(clusters, list):
            raise InvalidProblemError("rack mapping: 'ClusterInfo' must be a list")
        return mapping_from_topography(
            {str(item["cluster"]): item.get("nodes", []) for item in clusters}
        )
    if isinstance(data, Mapping):
        if all(isinstance(v, str) for v in data.values()):
            return RackMapping({str(k): v for k, v in data.items()})
        if all(isinstance(v, list) for v in data.values()):
            return mapping_from_topography(data)
    raise InvalidProblemError(
        "rack mapping: expected {host: rack}, {rack: [hosts]} or the R-Storm "
        "{'ClusterInfo': [...]} format"
    )


def load_rack_mapping(path: str | Path, *, default: str = DEFAULT_RACK) -> RackMapping:
    """Read a mapping file (format detected from its content, see the module docstring)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise InvalidProblemError(f"rack mapping: cannot read {path}: {error}") from error
    return parse_rack_mapping(text, default=default)


def apply_racks(
    nodes: Iterable[Node],
    mapping: RackMapping | Mapping[str, str],
    host_of: Mapping[str, str] | None = None,
) -> tuple[Node, ...]:
    """The nodes with ``rack`` set from ``mapping``.

    ``host_of`` maps node id → host name when they differ (Storm supervisors are keyed by
    id, racks by host); by default the node id is the host.
    """
    table = mapping if isinstance(mapping, RackMapping) else RackMapping(mapping)
    hosts = host_of or {}
    return tuple(replace(n, rack=table.rack_of(hosts.get(n.id, n.id))) for n in nodes)
