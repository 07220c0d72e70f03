"""scheduler-py: the Python brain of a drop-in Apache Storm scheduler."""

__version__ = "0.1.0"
"""The one version source: the wheel's version (pyproject.toml reads it), and the shim jar's
(storm_plugin/pom.xml must equal it; tests/test_release.py, ``make dist``). Versioning and the
jar/wheel skew rule: docs/install.md, "Versions"."""
