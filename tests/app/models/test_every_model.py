"""Every item model in the app is held to Qt's model contract (pytest-qt's qtmodeltester) by some test."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import foldscope.app
from foldscope.app.qt import QAbstractItemModel

TESTS = Path(__file__).resolve().parents[1]


ABSTRACT = {"MessageTableModel"}  # the base of RecordModel and ViewModel, never shown itself


def app_models() -> set[str]:
    """The names of the item model classes the app's modules define."""
    found = set()
    for info in pkgutil.walk_packages(foldscope.app.__path__, "foldscope.app."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, QAbstractItemModel) and value.__module__ == info.name:
                found.add(name)
    return found - ABSTRACT


def test_each_item_model_of_the_app_is_checked_by_the_model_tester():
    checked = set()
    for path in TESTS.rglob("test_*.py"):
        text = path.read_text(encoding="utf-8")
        if "qtmodeltester.check" in text:
            checked |= {name for name in app_models() if name in text}
    models = app_models()
    assert models >= {"RecordModel", "ViewModel", "MessageFilter", "FoldModel", "RowsModel", "TotalsModel"}
    assert models - checked == set()
