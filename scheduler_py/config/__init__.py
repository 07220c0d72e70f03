"""Configuration: every key the brain, the shim and the worker monitor read
(:mod:`scheduler_py.config.keys`), and the one way text becomes a typed value
(:mod:`scheduler_py.config.values`). Imports nothing else of ``scheduler_py``."""

from scheduler_py.config.values import ConfigValueError, coerce, parse_key_values

__all__ = ["ConfigValueError", "coerce", "parse_key_values"]
