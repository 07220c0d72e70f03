#!/usr/bin/env bash
# Build the topology jar of a streamparse project without Leiningen.
#
#   deploy/build-topology-jar.sh <project> [out.jar]
#     <project>  a streamparse project directory, or the name of one under topologies/
#     out.jar    default <project>/_build/<name>-<version>.jar (name/version from
#                project.clj when present, else <dirname>-0.0.1-SNAPSHOT); the path is
#                printed as the last line of output.
#
# `sparse jar`/`sparse submit` copy src/ to _resources/resources/ and run `lein jar`,
# whose :resource-paths ["_resources"] puts the Python sources under resources/ in the
# jar; with only Python components no Java class goes in.  Leiningen needs Clojars, which
# is out of reach here, so this script writes the same jar directly: META-INF/MANIFEST.MF
# plus resources/<everything under src/> (without __pycache__/*.pyc).  When Storm's
# supervisor downloads the topology it extracts resources/ from the jar into the
# topology's directory; ShellBolt/ShellSpout start `streamparse_run <module.Class>`
# there and streamparse_run imports the module from resources/.
set -euo pipefail

die() { echo "[build-topology-jar] ERROR: $*" >&2; exit 1; }
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

[[ $# -ge 1 ]] || die "usage: $0 <project-dir|name> [out.jar]"
project="$1"
if [[ ! -d "$project" && -d "$REPO/topologies/$project" ]]; then project="$REPO/topologies/$project"; fi
[[ -d "$project" ]] || die "no project directory '$1' (nor $REPO/topologies/$1)"
project="$(cd "$project" && pwd)"
[[ -f "$project/config.json" ]] || die "$project has no config.json: not a streamparse project"
[[ -d "$project/src" ]] || die "$project has no src/ directory (streamparse puts it in the jar as resources/)"

name="$(basename "$project")" version="0.0.1-SNAPSHOT"
if [[ -f "$project/project.clj" ]]; then
  read -r name version < <(sed -n 's/^(defproject \([^ ]*\) "\([^"]*\)".*/\1 \2/p' "$project/project.clj" | head -n1) \
    || true
  name="${name:-$(basename "$project")}" version="${version:-0.0.1-SNAPSHOT}"
fi
out="${2:-$project/_build/$name-$version.jar}"
mkdir -p "$(dirname "$out")"

python3 - "$project/src" "$out" <<'PY'
import os, sys, time, zipfile
src, out = sys.argv[1], sys.argv[2]
tmp = out + ".tmp"
count = 0
with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("META-INF/MANIFEST.MF",
               "Manifest-Version: 1.0\r\nCreated-By: deploy/build-topology-jar.sh\r\n\r\n")
    z.writestr("resources/", "")
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        rel = os.path.relpath(root, src)
        if rel != ".":
            z.writestr("resources/" + rel.replace(os.sep, "/") + "/", "")
        for f in sorted(files):
            if f.endswith((".pyc", ".pyo")) or f.startswith("."):
                continue
            path = os.path.join(root, f)
            arc = "resources/" + os.path.relpath(path, src).replace(os.sep, "/")
            z.write(path, arc)
            count += 1
os.replace(tmp, out)
print(f"[build-topology-jar] {count} files from {src} -> resources/ in {out}", file=sys.stderr)
PY
echo "$out"
