"""core never imports Qt or app: every core module imports with PySide6 and app blocked."""

import subprocess
import sys

from tests.paths import ROOT

BLOCKER = r"""
import importlib, importlib.abc, pkgutil, sys

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("PySide6", "shiboken6") or name.startswith("foldscope.app"):
            raise ImportError(f"core must not import {name}")
        return None

sys.meta_path.insert(0, Refuse())
import foldscope.core
names = [m.name for m in pkgutil.walk_packages(foldscope.core.__path__, "foldscope.core.") if not m.name.endswith(".__main__")]
for name in names:
    importlib.import_module(name)
print("\n".join(names))
"""


def _modules_on_disk() -> set[str]:
    names = set()
    for path in (ROOT / "core").rglob("*.py"):
        parts = ("foldscope", "core") + path.relative_to(ROOT / "core").with_suffix("").parts
        if parts[-1] == "__main__":
            continue  # runs the CLI when imported
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names - {"foldscope.core"}


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_every_core_module_imports_without_qt_or_app():
    done = _run(BLOCKER)
    assert done.returncode == 0, done.stderr
    imported = set(done.stdout.split())
    assert _modules_on_disk() <= imported
    assert {
        "foldscope.core.store.library",
        "foldscope.core.formats.lionagi",
        "foldscope.core.cli.basic",
        "foldscope.core.formats.demo",
    } <= imported


def test_the_blocker_really_blocks():
    done = _run(BLOCKER + "\nimport PySide6\n")
    assert done.returncode != 0 and "core must not import PySide6" in done.stderr
