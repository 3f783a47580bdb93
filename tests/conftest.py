"""Suite-wide set-up: headless Qt, the shared corpus located beside the project, and Qt blocked on request."""

import importlib.abc
import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from tests.paths import CORPUS_DEV

# CI (CI=true) draws the same examples on every run, so a landing that passed cannot fail later by chance;
# a rare case a random run finds is then a bug to fix with its example, not a red build for someone else.
# No example has a deadline: speed is measured by the benches in bench/, never by a timed test, and a first example
# that imports the modules under test can take a second on a loaded machine (a "flaky" failure that proves nothing).
settings.register_profile("local", deadline=None)
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "local")

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


class _RefuseQt(importlib.abc.MetaPathFinder):
    """`make check` runs tests/core with FOLDSCOPE_BLOCK_QT=1: the core and its tests must not need Qt."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("PySide6", "shiboken6", "pytestqt") or name.startswith("foldscope.app"):
            raise ImportError(f"Qt is blocked for this run: {name}")
        return None


if os.environ.get("FOLDSCOPE_BLOCK_QT") == "1":
    sys.meta_path.insert(0, _RefuseQt())


@pytest.fixture
def corpus_dev() -> Path:
    """The dev corpus folder, or a clean skip when it is absent (a fresh machine without shared/)."""
    if not CORPUS_DEV.is_dir():
        pytest.skip(f"corpus not present at {CORPUS_DEV}")
    return CORPUS_DEV


@pytest.fixture(autouse=True)
def _isolated_library(tmp_path, monkeypatch):
    """Every test gets its own library database; nothing touches the user's data folder."""
    monkeypatch.setenv("FOLDSCOPE_DB", str(tmp_path / "library.db"))
    monkeypatch.setenv("FOLDSCOPE_CONFIG", str(tmp_path / "config"))  # window settings, never the user's
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user prices.json (core.model.pricing)
    monkeypatch.setenv("FOLDSCOPE_AGENT_HOME", str(tmp_path / "agent-home"))  # no user CLAUDE.md or MCP servers (head_split)
