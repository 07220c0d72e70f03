#!/usr/bin/env bash
# Copy the CA certificates this host trusts beyond Debian's own set into
# deploy/ca-certificates/ (see the README there), one file per certificate, for
# deploy/Dockerfile to trust too.  Certificates it wrote before (host-*.crt) are replaced.
#
#   deploy/host-ca-certificates.sh [BUNDLE]   # BUNDLE: default /etc/ssl/certs/ca-certificates.crt
set -euo pipefail

OUT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/ca-certificates"
BUNDLE="${1:-/etc/ssl/certs/ca-certificates.crt}"
rm -f "$OUT"/host-*.crt
if [[ ! -f "$BUNDLE" ]]; then
  echo "[host-ca-certificates] no CA bundle at $BUNDLE: nothing to copy" >&2
  exit 0
fi
python3 - "$BUNDLE" "$OUT" <<'PY'
import pathlib
import re
import sys

PEM = re.compile(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", re.S)


def certificates(text: str) -> list[str]:
    return [c.strip() for c in PEM.findall(text)]


bundle, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
debian = set()
for shipped in pathlib.Path("/usr/share/ca-certificates").rglob("*.crt"):
    debian.update(certificates(shipped.read_text(errors="replace")))
extra = [c for c in certificates(bundle.read_text(errors="replace")) if c not in debian]
for number, cert in enumerate(extra, 1):
    (out / f"host-{number}.crt").write_text(cert + "\n")
print(f"[host-ca-certificates] {len(extra)} certificate(s) beyond Debian's set -> {out}", file=sys.stderr)
PY
