"""``python -m scheduler_py.bench NAME|all [--quick] [--seed N] [--output-dir DIR]``."""

import sys

from scheduler_py.bench.cli import main

sys.exit(main())
