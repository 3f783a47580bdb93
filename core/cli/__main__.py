"""`python -m foldscope.core.cli`: the headless commands without the GUI's entry point."""

import sys

from foldscope.core.cli.main import main

sys.exit(main())
