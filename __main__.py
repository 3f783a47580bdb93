"""`python -m foldscope`: the same entry point as the `foldscope` command."""

import sys

from foldscope.app.main import run

sys.exit(run())
