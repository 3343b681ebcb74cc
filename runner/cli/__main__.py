"""`python -m runner.cli`: the same command as the `shiftbench` entry point."""

from __future__ import annotations

import sys

from runner.cli.main import main

sys.exit(main())
