"""``python -m scheduler_py.cli``: the same as the ``scheduler-py`` command."""

import sys

from scheduler_py.cli import main

sys.exit(main())
