"""scheduler_py/config/keys.py is the one list of configuration keys: the tables of
docs/configuration.md are rendered from it, every ``scheduler.*`` key the Python or Java
sources spell is in it, and its defaults are the ones the code uses (TriggerConfig, the
shim's BrainConfig, the worker monitor's MonitorConfig)."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from scheduler_py.config import keys
from scheduler_py.reconfig.trigger import TriggerConfig

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "docs" / "configuration.md"
JAVA = REPO / "storm_plugin" / "src" / "main" / "java"
NOT_KEYS = {"scheduler.thrift", keys.RECONFIG_PREFIX}


@pytest.mark.parametrize("scope", sorted(keys.SCOPES))
def test_reference_tables_are_rendered_from_the_list(scope):
    reference = REFERENCE.read_text()
    match = re.search(
        rf"<!-- keys:{scope} [^>]*-->\n(.*?)\n<!-- /keys:{scope} -->", reference, re.S
    )
    assert match, f"docs/configuration.md has no <!-- keys:{scope} --> block"
    expected = f"{keys.SCOPES[scope]}:\n\n{keys.markdown_table(scope)}"
    assert match.group(1) == expected, (
        f"docs/configuration.md's {scope} table differs from scheduler_py/config/keys.py; "
        f"replace the block with:\n{expected}"
    )


def _spelled_keys() -> set[str]:
    pattern = re.compile(r"""["'](scheduler\.[a-z0-9._]+)["']""")
    found = set()
    for path in [*REPO.joinpath("scheduler_py").rglob("*.py"), *JAVA.rglob("*.java")]:
        if path.name == "keys.py":
            continue
        found |= set(pattern.findall(path.read_text()))
    return found - NOT_KEYS


def test_every_key_the_sources_spell_is_listed():
    unlisted = sorted(_spelled_keys() - set(keys.by_name()))
    assert not unlisted, f"add these to scheduler_py/config/keys.py: {unlisted}"


def test_reconfiguration_keys_are_the_trigger_settings_with_their_defaults():
    listed = {k.name.removeprefix(keys.RECONFIG_PREFIX): k.default for k in keys.RECONFIG}
    defaults = TriggerConfig()
    actual = {f.name.replace("_", "."): getattr(defaults, f.name) for f in fields(TriggerConfig)}
    assert listed == actual


@pytest.mark.parametrize(
    ("java_file", "constants"),
    [
        (
            "io/schedulerpy/storm/BrainConfig.java",
            {
                "HOST": keys.BRAIN_HOST,
                "PORT": keys.BRAIN_PORT,
                "TIMEOUT_MS": keys.BRAIN_TIMEOUT_MS,
                "ENABLED": keys.BRAIN_ENABLED,
            },
        ),
        (
            "io/schedulerpy/storm/monitor/MonitorConfig.java",
            {
                "WINDOW_SECS": keys.MONITOR_WINDOW,
                "SAMPLE_RATE": keys.MONITOR_SAMPLE_RATE,
                "ZK_ROOT": keys.MONITOR_ZK_ROOT,
                "RETENTION_WINDOWS": keys.MONITOR_RETENTION,
                "LIVE_SECS": keys.MONITOR_LIVE_SECS,
            },
        ),
    ],
)
def test_java_names_and_defaults_match(java_file, constants):
    source = (JAVA / java_file).read_text()
    for constant, key in constants.items():
        name = re.search(rf'\b{constant}\s*=\s*"([^"]+)"', source)
        assert name and name.group(1) == key.name, f"{java_file}: {constant}"
        default = re.search(rf"\bDEFAULT_{constant}\s*=\s*([^;]+);", source)
        assert default, f"{java_file}: DEFAULT_{constant}"
        value = default.group(1).strip().strip('"')
        if isinstance(key.default, bool):
            assert value == str(key.default).lower(), key.name
        elif isinstance(key.default, int | float):
            assert float(value) == float(key.default), key.name
        else:
            assert value == key.default, key.name


def test_the_readme_names_the_service_default_algorithm():
    readme = (REPO / "README.md").read_text()
    row = re.search(r"^\| no preference \(the service default\) \| `([a-z0-9_]+)` \|", readme, re.M)
    assert row, "README.md's 'Choosing an algorithm' table has no service-default row"
    assert row.group(1) == keys.DEFAULT_ALGORITHM, (
        f"README.md names `{row.group(1)}` as the service default; "
        f"scheduler_py/config/keys.py has {keys.DEFAULT_ALGORITHM!r}"
    )


COMPONENT_RESOURCE_KEYS = {keys.COMPONENT_CPU.name, keys.COMPONENT_MEMORY.name}
"""reach the brain as each component's declared resources (Storm resolves them per component),
not as topology conf"""


def _shim_conf_keys() -> set[str]:
    """The Storm keys of ``SnapshotBuilder.EXTRA_CONF_KEYS``, spelled as Storm's ``Config``
    constants (``TOPOLOGY_MAX_SPOUT_PENDING`` is ``topology.max.spout.pending``)."""
    source = (JAVA / "io/schedulerpy/storm/SnapshotBuilder.java").read_text()
    listed = re.search(r"EXTRA_CONF_KEYS\s*=.*?List\.of\((.*?)\)\);", source, re.S)
    assert listed, "SnapshotBuilder.java: EXTRA_CONF_KEYS = ...List.of(...) not found"
    constants = re.findall(r"Config\.([A-Z0-9_]+)", listed.group(1))
    return {c.lower().replace("_", ".") for c in constants}


def test_the_shim_passes_every_topology_key_the_brain_reads():
    read = {
        k.name for k in keys.ALL if k.scope == "topology" and k.name.startswith("topology.")
    } - COMPONENT_RESOURCE_KEYS
    passed = _shim_conf_keys()
    assert keys.DISABLE_LOADAWARE.name in read
    assert not read - passed, (
        f"the brain reads {sorted(read - passed)} from a topology's conf but the shim does not "
        "send them: add them to EXTRA_CONF_KEYS in SnapshotBuilder.java"
    )
