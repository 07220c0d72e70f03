"""scheduler-py: the Python brain of a drop-in Apache Storm scheduler."""

__version__ = "0.1.0"
