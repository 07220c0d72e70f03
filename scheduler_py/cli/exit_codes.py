"""The exit status of every ``scheduler-py`` command (docs/configuration.md, "Exit status").

The numbers above 2 are those of BSD's ``sysexits.h``, which service managers and scripts
already know (systemd's ``RestartPreventExitStatus=`` for instance):

- :data:`OK` 0: done;
- :data:`FAILED` 1: the command ran and the answer is "no" (the brain refused, a
  reconfiguration did not complete, no aggregate yet);
- :data:`USAGE` 2: a bad command line (argparse's own status; an unknown algorithm, a value
  out of range);
- :data:`DATA_ERROR` 65: bad input data (a problem document that is not valid, or that cannot
  be placed);
- :data:`NO_INPUT` 66: an input file that does not exist or cannot be read;
- :data:`UNAVAILABLE` 69: a service the command needs did not answer (ZooKeeper, Nimbus, the
  brain, a Spark master);
- :data:`CONFIG` 78: the configuration cannot be used (a malformed ``storm.yaml``, a secret or
  key file that cannot be read or created, a state directory that cannot be written, a
  missing extra).

A command raises :class:`CommandError` with one of these; ``scheduler_py.cli.main`` prints its
message and returns its status.
"""

from __future__ import annotations

OK = 0
FAILED = 1
USAGE = 2
DATA_ERROR = 65
NO_INPUT = 66
UNAVAILABLE = 69
CONFIG = 78

MEANINGS: dict[int, str] = {
    OK: "done",
    FAILED: "the command ran and the answer is no (the brain refused, a reconfiguration did "
    "not complete, no aggregate yet)",
    USAGE: "bad command line (unknown option, bad value, unknown algorithm)",
    DATA_ERROR: "bad input data (an invalid problem document, or one that cannot be placed)",
    NO_INPUT: "an input file is missing or unreadable",
    UNAVAILABLE: "a service did not answer: ZooKeeper, Nimbus, the brain or a Spark master",
    CONFIG: "unusable configuration: storm.yaml, a secret or key file, the state directory, "
    "a missing extra",
}


class CommandError(SystemExit):
    """Stop a command with ``message`` and exit status ``code``.

    A :class:`SystemExit`, so a command's ``main`` called directly (a test, another tool)
    stops as before; ``str(error)`` is the message and ``error.code`` the status.
    """

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def markdown_table() -> str:
    """The table of docs/configuration.md, "Exit status"."""
    rows = ["| status | meaning |", "| --- | --- |"]
    rows += [f"| {code} | {meaning} |" for code, meaning in MEANINGS.items()]
    return "\n".join(rows)
