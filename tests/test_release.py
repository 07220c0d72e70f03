"""Release plumbing (docs/development.md, "Releasing"): one version for the wheel and the shim
jar, the CHANGELOG has its entry, and the shim's committed Java Thrift code
(storm_plugin/src/generated) is the one scheduler_py/service/scheduler.thrift generates."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

import scheduler_py

REPO = Path(__file__).resolve().parents[1]
POM = REPO / "storm_plugin" / "pom.xml"
IDL = REPO / "scheduler_py" / "service" / "scheduler.thrift"
STAMP = REPO / "storm_plugin" / "src" / "generated" / "scheduler.thrift.sha256"
THRIFT_JAVA = REPO / "storm_plugin" / "thrift-java.sh"
MAVEN = "{http://maven.apache.org/POM/4.0.0}"
REGENERATE = "make thrift-java"


def _pom(path: Path = POM) -> ET.Element:
    return ET.parse(path).getroot()


def test_the_wheel_takes_its_version_from_the_package():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"], "a second version in pyproject.toml"
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "scheduler_py.__version__"
    }
    assert re.fullmatch(r"\d+\.\d+\.\d+", scheduler_py.__version__), scheduler_py.__version__


def test_the_jar_has_the_wheels_version():
    assert _pom().findtext(f"{MAVEN}version") == scheduler_py.__version__, (
        f"storm_plugin/pom.xml's <version> must be scheduler_py.__version__ "
        f"({scheduler_py.__version__}): one version for the jar and the wheel"
    )


def test_the_changelog_has_an_unreleased_section_and_this_versions_entry():
    text = (REPO / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## \[([^\]]+)\]", text, flags=re.MULTILINE)
    assert headings[0] == "Unreleased", headings
    assert scheduler_py.__version__ in headings, headings


def test_the_committed_thrift_java_was_generated_from_this_idl():
    recorded = STAMP.read_text().split()[0]
    assert recorded == hashlib.sha256(IDL.read_bytes()).hexdigest(), (
        "scheduler_py/service/scheduler.thrift changed since storm_plugin/src/generated was "
        f"generated: run `{REGENERATE}` and commit storm_plugin/src/generated"
    )
    generated = sorted((REPO / "storm_plugin" / "src" / "generated" / "java").rglob("*.java"))
    assert generated, "no committed Java Thrift code"
    services = re.findall(r"^service (\w+)", IDL.read_text(), flags=re.MULTILINE)
    assert services and {f"{name}.java" for name in services} <= {p.name for p in generated}


def _thrift_version() -> str | None:
    thrift = shutil.which("thrift")
    if thrift is None:
        return None
    done = subprocess.run([thrift, "--version"], capture_output=True, text=True, check=False)
    return done.stdout.split()[-1] if done.stdout.split() else None


def test_regenerating_gives_the_committed_files_byte_for_byte():
    wanted = _pom().findtext(f"{MAVEN}properties/{MAVEN}libthrift.version")
    found = _thrift_version()
    if found != wanted:
        pytest.skip(
            f"needs the Thrift compiler {wanted} (deploy/install-system-deps.sh), found {found}"
        )
    done = subprocess.run(
        ["bash", str(THRIFT_JAVA), "check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def _copy_tree(tmp_path: Path) -> Path:
    """The files the build's check reads, copied into a tree of the repository's layout."""
    root = tmp_path / "repo"
    for relative in (
        "storm_plugin/thrift-java.sh",
        "storm_plugin/pom.xml",
        "storm_plugin/src/generated/scheduler.thrift.sha256",
        "scheduler_py/service/scheduler.thrift",
        "scheduler_py/__init__.py",
        "deploy/dist.sh",
    ):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / relative, root / relative)
    shutil.copytree(
        REPO / "storm_plugin/src/generated/java", root / "storm_plugin/src/generated/java"
    )
    return root


def test_the_build_refuses_a_changed_idl_without_a_compiler_and_says_how_to_regenerate(tmp_path):
    root = _copy_tree(tmp_path)
    script = root / "storm_plugin/thrift-java.sh"
    env = dict(os.environ, THRIFT=str(tmp_path / "no-thrift-here"))
    unchanged = subprocess.run(
        ["bash", str(script), "build"], env=env, capture_output=True, text=True, check=False
    )
    assert unchanged.returncode == 0, unchanged.stderr  # the release build needs no compiler
    with (root / "scheduler_py/service/scheduler.thrift").open("a") as idl:
        idl.write("\nconst i32 ADDED_BY_THE_TEST = 1\n")
    changed = subprocess.run(
        ["bash", str(script), "build"], env=env, capture_output=True, text=True, check=False
    )
    assert changed.returncode != 0
    assert REGENERATE in changed.stderr and "thrift-compiler" in changed.stderr, changed.stderr


def test_dist_refuses_a_jar_version_other_than_the_wheels(tmp_path):
    root = _copy_tree(tmp_path)
    pom = root / "storm_plugin/pom.xml"
    text = pom.read_text()
    version = f"<version>{scheduler_py.__version__}</version>"
    assert version in text
    pom.write_text(text.replace(version, "<version>9.9.9</version>", 1))
    done = subprocess.run(
        ["bash", str(root / "deploy/dist.sh")],
        env=dict(os.environ, PY=sys.executable),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert f"says {scheduler_py.__version__}, storm_plugin/pom.xml says 9.9.9" in done.stderr
    assert not (root / "dist").exists()


# --- the two Python distributions: the runtime, and the benchmarks + tooling apart -------------

TOOLING = ("scheduler_py/bench/", "scheduler_py/devtools/")


@pytest.fixture(scope="module")
def python_dist(tmp_path_factory) -> Path:
    """deploy/dist-python.sh's artifacts (what `make dist` publishes beside the jar), built
    with the venv's setuptools (no package index)."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        ["bash", str(REPO / "deploy" / "dist-python.sh"), str(out)],
        env=dict(os.environ, PY=sys.executable, PYTHON_BUILD_ARGS="--no-isolation"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


def _names(archive: Path) -> list[str]:
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as wheel:
            return wheel.namelist()
    with tarfile.open(archive) as sdist:
        return [name.split("/", 1)[1] for name in sdist.getnames() if "/" in name]


def _metadata(wheel: Path) -> dict[str, list[str]]:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        fields: dict[str, list[str]] = {}
        for line in archive.read(name).decode().split("\n\n", 1)[0].splitlines():
            key, _, value = line.partition(": ")
            fields.setdefault(key, []).append(value)
    return fields


def test_the_runtime_wheel_and_sdist_carry_no_benchmark_nor_devtools_module(python_dist):
    version = scheduler_py.__version__
    wheel = python_dist / f"scheduler_py-{version}-py3-none-any.whl"
    sdist = python_dist / f"scheduler_py-{version}.tar.gz"
    for archive in (wheel, sdist):
        names = _names(archive)
        leaked = [n for n in names if n.startswith(TOOLING)]
        assert not leaked, f"{archive.name} carries {leaked[:5]}"
        for runtime in ("scheduler_py/cli/bench.py", "scheduler_py/nimbus/placement_table.py"):
            assert runtime in names, f"{archive.name} lacks {runtime}"
    assert _metadata(wheel)["Version"] == [version]


def test_the_bench_wheel_carries_every_tooling_module_and_pins_the_runtime(python_dist):
    version = scheduler_py.__version__
    wheel = python_dist / f"scheduler_py_bench-{version}-py3-none-any.whl"
    assert (python_dist / f"scheduler_py_bench-{version}.tar.gz").is_file()
    names = set(_names(wheel))
    for folder in TOOLING:
        modules = {
            p.relative_to(REPO).as_posix()
            for p in (REPO / folder).rglob("*.py")
            if "__pycache__" not in p.parts
        }
        assert modules and modules <= names, sorted(modules - names)[:5]
    runtime = [n for n in names if n.startswith("scheduler_py/") and not n.startswith(TOOLING)]
    assert not runtime, f"the bench wheel overwrites runtime files: {runtime[:5]}"
    metadata = _metadata(wheel)
    assert metadata["Name"] == ["scheduler-py-bench"]
    assert metadata["Version"] == [version]
    assert metadata["Requires-Dist"] == [f"scheduler-py[bench]=={version}"]


def _installed(target: Path, *wheels: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target)]
        + [str(w) for w in wheels],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _cli_from(target: Path, cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``scheduler-py ARGV`` with only ``target`` and the venv's third-party packages on the path:
    ``-S`` keeps the checkout's editable install (a .pth in site-packages) out."""
    import sysconfig

    path = os.pathsep.join([str(target), sysconfig.get_paths()["purelib"]])
    return subprocess.run(
        [sys.executable, "-S", "-m", "scheduler_py.cli", *argv],
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=path),
        capture_output=True,
        text=True,
        check=False,
    )


def test_bench_without_the_bench_package_names_it_and_with_it_runs(python_dist, tmp_path):
    version = scheduler_py.__version__
    target = tmp_path / "site"
    _installed(target, python_dist / f"scheduler_py-{version}-py3-none-any.whl")
    probe = _cli_from(target, tmp_path, "algorithms")
    assert probe.returncode == 0, probe.stderr  # the runtime works without the benchmarks
    for argv in (("bench", "--list"), ("bench", "scale", "--quick"), ("bench", "-h")):
        done = _cli_from(target, tmp_path, *argv)
        assert done.returncode == 78, (argv, done.returncode, done.stderr)
        assert f"pip install 'scheduler-py-bench=={version}'" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr, done.stderr
    located = _cli_from(target, tmp_path, "--version")
    assert located.returncode == 0 and version in located.stdout, located
    both = tmp_path / "site-with-bench"  # pip --target never merges into an existing folder
    _installed(
        both,
        python_dist / f"scheduler_py-{version}-py3-none-any.whl",
        python_dist / f"scheduler_py_bench-{version}-py3-none-any.whl",
    )
    listed = _cli_from(both, tmp_path, "bench", "--list")
    assert listed.returncode == 0, listed.stderr
    assert "scale" in listed.stdout and "roundtrip" in listed.stdout, listed.stdout
