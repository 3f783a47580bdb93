"""Waste is one quantity with one figure: what a write of text that could have been read (rewrite, expired,
provider, unexplained) cost beyond reading it. `cache`'s text, its --json and the status line give a request's or a
session's waste as the same figure, and a first or append write (the expected cost of growing) wastes nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from foldscope.core.cli import main as cli
from foldscope.core.cli import statusline
from foldscope.core.forensics.cause_prices import READ_INSTEAD

DEV = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus" / "dev" / "claude_code"
FILES = [DEV / "session-9eda1058.jsonl", DEV / "session-196820da.jsonl"]  # provider misses beside appends; rewrites
needs_dev = pytest.mark.skipif(not all(f.exists() for f in FILES), reason="the dev corpus (../shared/corpus/dev) is not here")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FOLDSCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FOLDSCOPE_PROFILE", raising=False)
    monkeypatch.setenv("FOLDSCOPE_STATUSLINE_IDLE", "0")


def run(capsys, *argv: str) -> str:
    assert cli.main(list(argv)) == 0
    return capsys.readouterr().out


def request_waste(row: dict) -> float:
    return sum(row["waste_usd"].values())


@needs_dev
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_requests_waste_is_one_figure_in_cache_text_json_and_the_status_line(path, capsys):
    out = json.loads(run(capsys, "cache", str(path), "--json"))
    priced = [r for r in out["requests"] if r["waste_usd"] is not None]
    assert priced
    # only the causes that could have been read waste: a first or append write has no waste figure
    assert all(set(r["waste_usd"]) <= READ_INSTEAD for r in priced)
    assert any(set(r["causes"]) & {"first", "append"} for r in priced)
    by_index = {r["index"]: request_waste(r) for r in priced}
    assert out["top_wasted"]
    for top in out["top_wasted"]:
        assert top["waste_usd"] == pytest.approx(by_index[top["index"]], abs=1e-8)
    by = out["totals"]["by_cause"]
    total = sum(by_index.values())
    assert sum(cell.get("waste_usd") or 0.0 for cell in by.values()) == pytest.approx(total, abs=1e-7)
    assert "waste_usd" not in by["first"] and "waste_usd" not in by["append"]
    # the text: each listed request's 'wasted' is its --json waste, and the first and append rows show none
    text = run(capsys, "cache", str(path))
    said = {int(m[1]): float(m[2]) for m in re.finditer(r"request (\d+): wasted \$([\d.]+) writing", text)}
    assert said and set(said) == {t["index"] for t in out["top_wasted"]}
    for index, usd in said.items():
        assert usd == pytest.approx(by_index[index], abs=5e-5)
    for part in ("first", "append"):
        row = next(line for line in text.splitlines() if line.startswith(part + " "))
        assert len(row.split()) == 3, row  # part, tokens, cost: no waste
    # the status line's wasted part is the session's waste, the sum of its requests'
    assert statusline.main(["--file", str(path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["cost"]["waste_usd"] == pytest.approx(total, abs=1e-7)
