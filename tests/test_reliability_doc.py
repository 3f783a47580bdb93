"""docs/reliability.md names the test that holds each promise: every test it names exists, so the page cannot
promise what no test holds any more."""

from __future__ import annotations

import re

from tests.paths import ROOT


def named_tests() -> list[tuple[str, str | None]]:
    """(file, test) for each `tests/...py::name` in the page, `::name` after it meaning the same file."""
    text = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    found, current = [], None
    for item in re.findall(r"`([^`]+)`", text):
        match = re.fullmatch(r"(tests/[\w/]+\.py)(?:::(\w+))?", item)
        if match:
            current = match.group(1)
            found.append((current, match.group(2)))
        elif item.startswith("::") and current is not None:
            found.append((current, item[2:]))
    return found


def test_every_test_the_reliability_page_names_exists():
    named = named_tests()
    assert len(named) >= 30
    missing = []
    for file, test in named:
        path = ROOT / file
        if not path.is_file():
            missing.append(file)
        elif test is not None and not re.search(rf"^def {test}\(", path.read_text(encoding="utf-8"), re.M):
            missing.append(f"{file}::{test}")
    assert missing == []
