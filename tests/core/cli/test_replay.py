"""`foldscope replay` on a file and on a folder: totals side by side, one clear line on bad input."""

import csv
import json
import shutil

from foldscope.core.cli.main import main
from foldscope.core.formats.demo import demo_path

TOTAL_KEYS = {"requests", "peak", "over_ceiling", "fresh", "cache_read", "cache_write", "rewrites", "folds", "cost_usd"}


def test_replay_file_prints_every_strategy_side_by_side(capsys):
    assert main(["replay", str(demo_path()), "--ceiling", "20000", "--caching", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [t["strategy"] for t in out["totals"]] == ["recorded", "none", "band", "compaction", "adr"]
    assert all(TOTAL_KEYS <= set(t) for t in out["totals"])
    assert out["ceiling"]["tokens"] == 20000 and out["priced"] and "rows" not in out
    by = {t["strategy"]: t for t in out["totals"]}
    assert by["band"]["peak"] < by["none"]["peak"] and by["band"]["folds"] > 0
    assert by["compaction"]["requests"] == by["none"]["requests"] + by["compaction"]["folds"]


def test_replay_text_and_per_request(capsys):
    assert main(["replay", str(demo_path()), "--ceiling", "auto", "--strategy", "none", "--strategy", "band"]) == 0
    text = capsys.readouterr().out
    assert "none" in text and "band" in text and "cost_usd" in text and "100000" in text
    assert main(["replay", str(demo_path()), "--strategy", "none", "--per-request", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["rows"]) == out["totals"][0]["requests"]


def test_per_request_without_json_prints_a_row_per_request_for_each_strategy(capsys):
    """New user 10: --per-request without --json printed only the totals table."""
    args = ["replay", str(demo_path()), "--ceiling", "20000", "--strategy", "recorded,adr", "--per-request"]
    assert main([*args, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert main(args) == 0
    text = capsys.readouterr().out
    for strategy in ("recorded", "adr"):
        assert f"{strategy}, per request:" in text
        block = text.split(f"{strategy}, per request:")[1].strip().split("\n\n")[0].splitlines()
        mine = [r for r in rows if r["strategy"] == strategy]
        assert block[0].split()[:3] == ["request", "messages", "estimate"] and len(block) == 1 + len(mine)
        for line, row in zip(block[1:], mine):
            cells = line.split()
            assert cells[0] == str(row["request"]) and cells[2] == f"{row['estimate']:,}"
    over = [r for r in rows if r["over_ceiling"]]
    assert over and text.count(" OVER") == len(over)


def test_bad_flags_and_files_get_one_line(capsys, tmp_path):
    assert main(["replay", str(demo_path()), "--fold-at", "1.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "context_fold_at" in err
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "missing.jsonl" in err


def test_replay_folder_writes_one_table_and_records_skips(capsys, tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(demo_path(), folder / "a.json")
    shutil.copy(demo_path(), folder / "b.json")
    (folder / "junk.txt").write_text("not a session\n")
    base = tmp_path / "table"
    assert main(["replay", str(folder), "--ceiling", "20000", "--workers", "2", "-o", str(base), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sessions"] == 2 and len(out["skipped"]) == 1 and "junk.txt" in out["skipped"][0]["error"]
    rows = list(csv.DictReader(open(f"{base}.csv", encoding="utf-8")))
    assert len(rows) == 10 and {r["strategy"] for r in rows} == {"recorded", "none", "band", "compaction", "adr"}
    assert json.loads(open(f"{base}.json", encoding="utf-8").read())["table"] == out["table"]
