"""`foldscope replay` on a file and on a folder: totals side by side, one clear line on bad input."""

import csv
import json
import shutil

import pytest

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
    assert "none" in text and "band" in text and "cost_usd" in text and "ceiling: 100,000" in text
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


def test_replay_estimator_predicted_names_what_the_adr_fold_decides_on(capsys, corpus_dev):
    path = str(corpus_dev / "codex" / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
    assert (
        main(["replay", path, "--ceiling", "45000", "--strategy", "adr,band", "--estimator", "predicted", "--per-request", "--json"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["settings"]["estimator"] == "predicted"
    by = {t["strategy"]: t for t in out["totals"]}
    assert by["adr"]["estimator"] == "predicted" and by["band"]["estimator"] == "adr"
    assert by["adr"]["predicted_peak"] < 45000 and by["adr"]["folds"] >= 1
    adr_rows = [r for r in out["rows"] if r["strategy"] == "adr"]
    assert all(isinstance(r["predicted"], int) for r in adr_rows)
    assert all(r["predicted"] is None for r in out["rows"] if r["strategy"] == "band")
    assert main(["replay", path, "--ceiling", "45000", "--strategy", "adr,band", "--estimator", "predicted"]) == 0
    text = capsys.readouterr().out
    assert "decides on: adr: the predicted input (the newest reported input" in text
    assert "band: the estimate (foldscope's count of the request times the scale" in text
    assert "estimator" in text  # the totals table has its row


def test_replay_estimator_default_is_adr_and_an_unknown_one_is_refused(capsys):
    assert main(["replay", str(demo_path()), "--ceiling", "20000", "--strategy", "adr", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["settings"]["estimator"] == "adr" and out["totals"][0]["estimator"] == "adr"
    with pytest.raises(SystemExit) as exited:  # argparse's own refusal: usage and one line, exit 2
        main(["replay", str(demo_path()), "--estimator", "oracle"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--estimator" in err and "oracle" in err


def test_replay_json_recorded_totals_are_the_reported_usage_with_the_cache_model_beside(capsys, corpus_dev):
    from foldscope.core.formats import load_session
    from foldscope.core.model.pricing import lookup_prices

    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    assert main(["replay", str(path), "--strategy", "recorded,none", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    recorded = next(t for t in out["totals"] if t["strategy"] == "recorded")
    usage = [r.usage for r in load_session(str(path)).trace]
    assert all(u is not None for u in usage)
    assert recorded["fresh"] == sum(u.input for u in usage)
    assert recorded["cache_read"] == sum(u.cache_read for u in usage)
    assert recorded["cache_write"] == sum(u.cache_write for u in usage)
    prices = lookup_prices(out["model"])
    bill = sum(
        round(
            prices.cost(
                u.input, u.cache_read, u.cache_write - min(u.cache_write_1h, u.cache_write), min(u.cache_write_1h, u.cache_write), u.output
            ),
            8,
        )
        for u in usage
    )
    assert recorded["cost_usd"] == round(bill, 6)
    for key in ("modelled_fresh", "modelled_cache_read", "modelled_cache_write", "modelled_cost_usd"):
        assert isinstance(recorded[key], (int, float))
    assert recorded["modelled_cache_write"] != recorded["cache_write"]  # the model is not the recording
    assert main(["replay", str(path), "--strategy", "recorded"]) == 0
    text = capsys.readouterr().out
    assert "model vs reported" in text and "over_ceiling" in text and "reported_over_ceiling" in text


def test_a_ceiling_no_request_can_fit_under_is_said_by_replay_and_requests(corpus_dev, capsys):
    # A ceiling at or below the unseen head: adr refuses everything, band and compaction send everything over it;
    # both commands say why instead of leaving a $0 column to explain itself.
    from foldscope.core.cli.main import main

    path = str(corpus_dev / "claude_code" / "session-9eda1058.jsonl")
    for argv in (["replay", path, "--ceiling", "500", "--strategy", "adr,band"], ["requests", path, "--ceiling", "500"]):
        assert main(argv) == 0
        said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("warning: the ceiling 500")]
        assert len(said) == 1 and "unseen head" in said[0] and "no request can fit" in said[0], argv
    assert main(["replay", path, "--ceiling", "200000", "--strategy", "adr"]) == 0
    assert "no request can fit" not in capsys.readouterr().out


def test_replay_db_reopens_a_file_from_the_library_counting_nothing_of_its_record_again_with_the_same_figures(
    capsys, corpus_dev, tmp_path, monkeypatch
):
    # A library that keeps each message's token count (issue 17): a file replayed with --db once is reopened from
    # its snapshot the next time, its record neither read nor tokenised again, and every figure is the same.
    from foldscope.core.formats import claude_code
    from foldscope.core.request.count import Counter

    tokenised: list[int] = []
    real = Counter._tokenise

    def counting(self, keys, texts, *memo):
        tokenised.append(sum(len(t) for t in texts))
        return real(self, keys, texts, *memo)

    monkeypatch.setattr(Counter, "_tokenise", counting)
    monkeypatch.setenv("FOLDSCOPE_COUNTING", "local")  # every count made here, where it is seen
    path, db = corpus_dev / "claude_code" / "session-196820da.jsonl", tmp_path / "lib.db"
    args = ["replay", str(path), "--strategy", "recorded,none", "--json", "--per-request", "--workers", "1"]
    assert main(args) == 0
    plain = json.loads(capsys.readouterr().out)
    outs, counted = [], []
    for _ in range(2):
        tokenised.clear()
        assert main([*args, "--db", str(db)]) == 0
        outs.append(json.loads(capsys.readouterr().out))
        counted.append(sum(tokenised))
    assert counted[0] > 0 and counted[1] == 0, counted
    assert outs[0]["library_session_id"] == outs[1]["library_session_id"]
    assert [out.pop("library_reopened") for out in outs] == [False, True]
    for out in outs:
        out.pop("library_session_id")
        assert out == plain
    assert main(["replay", str(path), "--strategy", "recorded", "--db", str(db)]) == 0
    assert "reopened from the library: nothing read or counted again" in capsys.readouterr().out

    def unread(*_, **__):
        raise AssertionError("the file was read again")

    monkeypatch.setattr(claude_code, "read", unread)
    assert main([*args, "--db", str(db)]) == 0
    assert json.loads(capsys.readouterr().out)["totals"] == plain["totals"]


def test_replay_db_is_for_one_file_and_a_bad_file_leaves_the_library_empty(capsys, tmp_path):
    from foldscope.core.store.library import Library

    folder, db = tmp_path / "folder", tmp_path / "lib.db"
    folder.mkdir()
    shutil.copy(demo_path(), folder / "demo.json")
    assert main(["replay", str(folder), "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--db" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user", "message": \n', encoding="utf-8")
    assert main(["replay", str(bad), "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "bad.jsonl" in err
    assert not db.exists() or Library(db).list_sessions() == []


def test_a_modelled_strategy_has_no_reported_over_ceiling_figure_where_the_recording_has_the_providers(capsys, corpus_dev):
    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    assert main(["replay", str(path), "--ceiling", "100000", "--per-request", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    totals = {t["strategy"]: t for t in out["totals"]}
    from foldscope.core.formats import load_session

    usage = [r.usage for r in load_session(str(path)).trace]
    # the recording's is the provider's own count: its requests at or past the ceiling
    assert totals["recorded"]["reported_over_ceiling"] == sum(u.reported_input >= 100_000 for u in usage if u is not None) > 0
    modelled = [name for name in totals if name != "recorded"]
    assert modelled and all(totals[name]["reported_over_ceiling"] is None for name in modelled)
    rows = [r for r in out["rows"] if r["strategy"] != "recorded"]
    assert rows and all(r["reported_over_ceiling"] is None and r["reported_input"] is None for r in rows)
    assert main(["replay", str(path), "--ceiling", "100000"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("reported_over_ceiling"))
    assert line.split()[1:] == [f"{totals['recorded']['reported_over_ceiling']:,}", "-", *["-"] * len(modelled)]
