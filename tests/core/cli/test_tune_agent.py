"""`foldscope tune` in the agents' terms: `--compact-at` sweeps the agent's own compaction knob, the recommendation is
printed as each agent's setting with its saving, the sessions that rule a policy out are named, and the caching words
hold beside any read share. The text and `--json` say the same."""

from __future__ import annotations

import json

from foldscope.core.cli.main import main
from foldscope.core.readout.tune_facts import policy_words
from tests.core.replay.compacting_files import compacting_file


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_compact_at_sweep_prints_the_recommendation_as_the_agents_setting_and_json_carries_the_same(tmp_path, capsys):
    compacting_file(tmp_path / "compacting.jsonl")
    args = ("tune", str(tmp_path), "--compact-at", "0.5,0.95", "--workers", "1")
    code, text, err = _run(capsys, *args)
    assert code == 0, err
    code, out, err = _run(capsys, *args, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert [p["policy"].split(",")[0] for p in result["policies"]] == ["agent's compaction at 0.5", "agent's compaction at 0.95"]
    by_name = {p["policy"]: p for p in result["policies"]}
    rec = result["recommendation"]
    assert rec["policy"] in by_name and rec["for_every_session"] is True
    fraction = 0.5 if "0.5," in rec["policy"] else 0.95
    (claude,) = [s for s in rec["settings"] if s["agent"] == "claude_code"]
    assert (claude["key"], claude["value"], claude["window"]) == ("autoCompactWindow", "133000" if fraction == 0.5 else "200000", 200_000)
    assert any(s["agent"] == "lionagi" and "context_fold_at: " + f"{fraction:g}" in s["yaml"] for s in rec["settings"])
    saving = rec["saving"]
    assert saving["sessions"] == 1 and saving["least_share"] <= saving["median_share"] <= saving["most_share"]
    # The same in words: the setting's line, the saving and its spread, and the sessions where it did worse.
    assert f"recommended: {rec['policy']}" in text
    assert claude["line"] in text and f"compacts at {claude['compacts_at']:,}" in text
    assert f"{saving['median_share']:.1%} at the median" in text
    assert "worse than the recording in no file" in text if not rec["worse_sessions"] else "compacting.jsonl" in text
    # The agent's own compaction at 0.5 compacts more often than at 0.95, past Claude Code's own point (the window less 33,000).
    rows = {r["compact_at"]: r for r in result["rows"]}
    assert rows[0.5]["folds"] > rows[0.95]["folds"] >= 1
    assert rows[0.95]["compacts_at"] == 167_000 and rows[0.5]["compacts_at"] == 100_000


def test_when_no_policy_is_safe_for_every_session_the_sessions_that_rule_each_out_are_named(tmp_path, capsys):
    compacting_file(tmp_path / "long.jsonl")  # past 160,000 before its first compaction
    compacting_file(tmp_path / "brief.jsonl", rounds=3)  # under 90,000 throughout
    args = ("tune", str(tmp_path), "--ceiling", "100000,150000", "--strategy", "none", "--workers", "1")
    code, text, err = _run(capsys, *args)
    assert code == 0, err
    code, out, err = _run(capsys, *args, "--json")
    result = json.loads(out)
    rec = result["recommendation"]
    assert [r["by"] for r in rec["ruled_out"]] == [[str(tmp_path / "long.jsonl")]] * 2
    assert rec["for_every_session"] is False and rec["left_out"] == [str(tmp_path / "long.jsonl")] and rec["sessions"] == 1
    assert "no policy is safe for every session" in text
    for ruled in rec["ruled_out"]:
        assert f"  {policy_words(ruled['policy'])}: long.jsonl" in text  # "ceiling 100,000", the key's 100000
    assert f"recommended: {policy_words(rec['policy'])}, for the other 1 file (ruled out only by long.jsonl" in text


def test_the_caching_words_say_what_they_mean_beside_a_read_share(corpus_dev, capsys):
    codex = str(sorted((corpus_dev / "codex").glob("*.jsonl"))[0])
    code, text, err = _run(capsys, "tune", codex, "--ceiling", "none", "--strategy", "none", "--caching", "off,on", "--workers", "1")
    assert code == 0, err
    code, out, err = _run(capsys, "tune", codex, "--ceiling", "none", "--strategy", "none", "--caching", "off", "--workers", "1", "--json")
    (policy,) = json.loads(out)["policies"]
    assert policy["cache_read_share"] > 0.5 and policy["automatic_cache_sessions"] == 1  # OpenAI's cache reads by itself
    assert "caching off" not in text
    assert "none, ceiling none, bound as launched, no marks placed by the policy" in text
    assert "no marks placed by the policy there; the provider's own cache still reads" in text


def test_the_agents_compaction_sweeps_alike_in_worker_processes(tmp_path, capsys):
    compacting_file(tmp_path / "a.jsonl")
    compacting_file(tmp_path / "b.jsonl", rounds=12)
    outs = []
    for workers in ("1", "2"):  # 2: the task, with the agent's limits bound, is carried to spawned workers
        code, out, err = _run(capsys, "tune", str(tmp_path), "--compact-at", "0.6", "--workers", workers, "--json")
        assert code == 0, err
        outs.append(json.loads(out))
    assert outs[0] == outs[1]
    assert {r["compacts_at"] for r in outs[0]["rows"]} == {120_000}  # 0.6 of the 200,000 window: autoCompactWindow 153,000


def test_a_compact_at_outside_the_window_is_refused_in_one_line(tmp_path, capsys):
    compacting_file(tmp_path / "a.jsonl", rounds=2)
    code, out, err = _run(capsys, "tune", str(tmp_path), "--compact-at", "1.5")
    assert code == 2 and out == ""
    assert err.strip() == "foldscope: --compact-at: compact-at: 1.5 is not a fraction of the window in (0, 1]"


def test_a_session_whose_window_is_unknown_is_said_to_leave_the_agents_compaction_idle(tmp_path, capsys, monkeypatch):
    from foldscope.core.cli import tune as tune_cli

    compacting_file(tmp_path / "a.jsonl", rounds=12)
    monkeypatch.setattr(tune_cli, "agent_window", lambda session: ("claude_code", None))
    code, text, err = _run(capsys, "tune", str(tmp_path), "--compact-at", "0.5", "--workers", "1")
    assert code == 0, err
    assert "no window known in 1 of 1 sessions (no agent rule, file figure or price list gives one)" in text
    assert "--ceiling N" not in text
