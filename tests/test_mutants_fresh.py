"""Every listed mutant (tools/mutate.py) still applies to the code as it is: a refactor or a format that moves a rule's
text makes `make mutate` stop at once, so the list is checked with the suite, not only when someone runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_mutant_applies_to_the_tree_as_it_is() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "mutate.py"), "--list"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") >= 80  # the list itself, one line per mutant
