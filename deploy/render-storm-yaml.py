#!/usr/bin/env python3
"""Render deploy/storm.yaml.template into a storm.yaml.

    render-storm-yaml.py TEMPLATE OUT [--extra FILE] KEY=VALUE...

${KEY} placeholders are substituted (Python string.Template) on every line that is not
a comment; a missing KEY is an error.  --extra appends a YAML file verbatim (used for
STORM_EXTRA_YAML).  Used by cluster-up.sh (one file per daemon) and by
docker-entrypoint.sh (one file per container).
"""

import argparse
import string
import sys


def render(template_text: str, values: dict[str, str]) -> str:
    out = []
    for lineno, line in enumerate(template_text.splitlines(keepends=True), 1):
        if line.lstrip().startswith("#"):
            out.append(line)
            continue
        try:
            out.append(string.Template(line).substitute(values))
        except KeyError as exc:
            raise SystemExit(
                f"render-storm-yaml: no value for {exc} (template line {lineno})"
            ) from None
    return "".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("template")
    p.add_argument("out")
    p.add_argument("--extra", default="", help="YAML file appended verbatim")
    p.add_argument("values", nargs="*", metavar="KEY=VALUE")
    args = p.parse_intermixed_args(argv)
    values = {}
    for pair in args.values:
        key, sep, value = pair.partition("=")
        if not sep:
            p.error(f"not KEY=VALUE: {pair}")
        values[key] = value
    with open(args.template) as fh:
        text = render(fh.read(), values)
    if args.extra:
        with open(args.extra) as fh:
            text += f"\n# --- extra YAML from {args.extra} ---\n" + fh.read()
    with open(args.out, "w") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
