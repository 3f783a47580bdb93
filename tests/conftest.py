"""Suite-wide set-up: headless Qt, and the shared corpus located beside the project."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
CORPUS_DEV = ROOT.parent / "shared" / "corpus" / "dev"


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
