"""`python -m foldscope.core.cli`: the headless commands without the GUI's entry point."""

from foldscope.core.cli.main import exit_now, main

exit_now(main())
