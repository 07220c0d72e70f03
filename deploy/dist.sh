#!/usr/bin/env bash
# `make dist`: the release artifacts in dist/, from one version (scheduler_py/__init__.py's
# __version__, which pyproject.toml reads and storm_plugin/pom.xml must equal):
#   scheduler_py-VERSION-py3-none-any.whl, scheduler_py-VERSION.tar.gz  (the brain's runtime; the
#       wheel is built from the sdist, so the sdist is complete)
#   scheduler_py_bench-VERSION-py3-none-any.whl, scheduler_py_bench-VERSION.tar.gz  (the
#       benchmarks and the local-cluster tooling, apart from the runtime; deploy/dist-python.sh
#       builds these four and checks that each wheel carries what it should)
#   storm-scheduler-py-VERSION.jar  (the shim: a copy of storm_plugin/target/storm-scheduler-plugin.jar,
#       which `make plugin` builds, its manifest's Implementation-Version checked)
#   SHA256SUMS
# Needs what deploy/install-build-deps.sh installs, the venv (`make venv`, for `python -m build`)
# and a package index for the build's isolated environment (setuptools, wheel). The release
# checklist: docs/development.md, "Releasing".
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-${VENV:-.venv}/bin/python}"
JAR="${PLUGIN_JAR:-storm_plugin/target/storm-scheduler-plugin.jar}"
die() { echo "dist.sh: $*" >&2; exit 1; }

version="$("$PY" - <<'PYEOF'
import ast, pathlib
tree = ast.parse(pathlib.Path("scheduler_py/__init__.py").read_text())
print(next(n.value.value for n in tree.body if isinstance(n, ast.Assign)
           and any(getattr(t, "id", None) == "__version__" for t in n.targets)))
PYEOF
)"
pom_version="$("$PY" - <<'PYEOF'
import xml.etree.ElementTree as ET
print(ET.parse("storm_plugin/pom.xml").getroot().findtext("{http://maven.apache.org/POM/4.0.0}version"))
PYEOF
)"
[ "$version" = "$pom_version" ] \
  || die "scheduler_py/__init__.py says $version, storm_plugin/pom.xml says $pom_version: set the pom's <version> to $version (one version for the wheel and the jar, docs/install.md \"Versions\")"
[ -f "$JAR" ] || die "$JAR not found: run \`make plugin\` first (make dist does)"
jar_version="$(unzip -p "$JAR" META-INF/MANIFEST.MF | tr -d '\r' | sed -n 's/^Implementation-Version: //p')"
[ "$jar_version" = "$version" ] \
  || die "$JAR is version '${jar_version}', expected $version: rebuild it (make plugin)"
if command -v git >/dev/null 2>&1 && [ -n "$(git status --porcelain -- scheduler_py storm_plugin pyproject.toml README.md LICENSE 2>/dev/null)" ]; then
  echo "dist.sh: WARNING: scheduler_py/, storm_plugin/ or the package metadata have uncommitted or untracked files, which the artifacts carry; a release is built from its clean tag (docs/development.md, \"Releasing\")" >&2
fi

rm -rf dist
mkdir -p dist
PY="$PY" deploy/dist-python.sh dist
cp "$JAR" "dist/storm-scheduler-py-$version.jar"
(cd dist && sha256sum -- * > SHA256SUMS)
for artifact in "dist/scheduler_py-$version-py3-none-any.whl" "dist/scheduler_py-$version.tar.gz" \
    "dist/scheduler_py_bench-$version-py3-none-any.whl" "dist/scheduler_py_bench-$version.tar.gz" \
    "dist/storm-scheduler-py-$version.jar"; do
  [ -f "$artifact" ] || die "expected $artifact, found: $(ls dist)"
done
echo "dist/ (version $version):"
(cd dist && ls -l -- *)
