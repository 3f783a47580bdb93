"""The policy sweep: a grid of policies over many sessions, the engines agreeing, failures named, the recommendation."""

import json
import multiprocessing
import threading

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats.demo import demo_path, write_demo
from foldscope.core.model.policy import PolicyError
from foldscope.core.replay.fleet import Cancelled, run_dask, run_local
from foldscope.core.replay.tune import (
    PolicyPoint,
    grid,
    grid_cachings,
    grid_items,
    grid_numbers,
    points_from_profiles,
    recommend,
    session_paths,
    summarise,
    tune_session,
)
from tests.core.replay_sessions import stall_on_stuck


def _replay_totals(capsys, path, *flags):
    """What `foldscope replay PATH FLAGS --json` prints as its totals."""
    assert main(["replay", path, *flags, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["totals"]


def _fleet(folder, sizes=(4, 6, 8)):
    for n, rounds in enumerate(sizes):
        write_demo(folder / f"s{n}.json", seed=n + 1, rounds=rounds)
    return [str(p) for p in sorted(folder.glob("*.json"))]


def test_a_grid_is_every_combination_of_the_values_given():
    points = grid(
        ceilings=["20000", "auto"],
        fold_ats=[0.8, 0.9],
        targets=[0.5],
        result_maxes=[None, 4000],
        cachings=[True, False],
        strategies=["adr", "band"],
    )
    assert len(points) == 2 * 2 * 1 * 2 * 2 * 2
    assert len({p.name for p in points}) == len(points)  # each policy is named apart in the table


def test_a_grid_refuses_a_bad_value_by_name_before_any_session_is_read():
    with pytest.raises(PolicyError, match="context_fold_target"):
        grid(fold_ats=[0.6], targets=[0.7])  # the target must sit below the line (Amendment 3)
    with pytest.raises(PolicyError, match="strategy"):
        grid(strategies=["fold-everything"])


def test_named_profiles_become_points_with_their_strategies():
    points = points_from_profiles(
        {
            "tight": {"max_input_tokens": 20000, "strategies": ["adr", "band"]},
            "cached": {"max_input_tokens": 30000, "prompt_caching": True},
        },
        "p.yaml",
    )
    assert [(p.name, p.strategy, p.ceiling, p.caching) for p in points] == [
        ("tight (adr)", "adr", "20000", None),
        ("tight (band)", "band", "20000", None),
        ("cached", "adr", "30000", True),
    ]
    with pytest.raises(PolicyError, match="p.yaml: bad"):
        points_from_profiles({"bad": {"max_input_tokens": 0}}, "p.yaml")


def test_one_policy_in_a_sweep_equals_foldscope_replay_under_that_policy(tmp_path, capsys):
    (path,) = _fleet(tmp_path, sizes=(10,))
    (point,) = grid(ceilings=["9000"], result_maxes=[4000], cachings=[True], strategies=["adr"])
    (row,) = tune_session(path, [point])["rows"]
    (totals,) = _replay_totals(capsys, path, "--ceiling", "9000", "--result-max", "4000", "--caching", "--strategy", "adr")
    for key in ("requests", "over_ceiling", "folds", "rewrites", "fresh", "cache_read", "cache_write", "peak", "cost_usd"):
        assert row[key] == totals[key], key
    assert row["folds"] > 0  # the ceiling is low enough that the policy did something


def test_a_session_that_fails_to_read_is_named_and_the_rest_complete(tmp_path):
    paths = _fleet(tmp_path)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "user", "message": ', encoding="utf-8")
    points = grid(ceilings=["9000"], strategies=["adr", "compaction"])
    results = list(run_local(session_paths([str(tmp_path)]), points, workers=2))
    out = summarise(results, points)
    assert out["sessions"] == len(paths)
    assert [f["file"] for f in out["failed"]] == [str(broken)]
    assert str(broken) in out["failed"][0]["error"]
    assert all(p["sessions"] == len(paths) for p in out["policies"])


def test_folders_are_walked_whole_skipping_hidden_and_subagent_folders(tmp_path):
    (tmp_path / "project" / "subagents").mkdir(parents=True)
    (tmp_path / ".hidden").mkdir()
    for name in ("project/a.jsonl", "project/subagents/agent-1.jsonl", ".hidden/b.jsonl", "project/notes.txt", "c.json"):
        (tmp_path / name).write_text("{}", encoding="utf-8")
    assert session_paths([str(tmp_path)]) == [str(tmp_path / "c.json"), str(tmp_path / "project" / "a.jsonl")]


def test_the_local_and_dask_engines_give_byte_identical_results(tmp_path, corpus_dev):
    paths = sorted(str(p) for p in (corpus_dev / "claude_code").glob("*.jsonl"))[:5] + _fleet(tmp_path, sizes=(6,))
    points = grid(ceilings=["60000", "150000"], strategies=["adr", "band"])
    local = summarise(run_local(paths, points, workers=2), points)
    dask = summarise(run_dask(paths, points, workers=2), points)
    assert json.dumps(local, sort_keys=True) == json.dumps(dask, sort_keys=True)
    assert local["sessions"] == len(paths) and not local["failed"]


def test_the_recommendation_is_the_cheapest_policy_with_nothing_over_the_ceiling():
    rows = [
        {
            "policy": "cheap but over",
            "strategy": "adr",
            "sessions": 3,
            "refused": 0,
            "over_ceiling": 2,
            "cost_usd": 1.0,
            "cost_vs_recorded": 0.4,
        },
        {"policy": "refuses", "strategy": "adr", "sessions": 3, "refused": 1, "over_ceiling": 0, "cost_usd": 1.5, "cost_vs_recorded": 0.5},
        {"policy": "safe", "strategy": "band", "sessions": 3, "refused": 0, "over_ceiling": 0, "cost_usd": 2.0, "cost_vs_recorded": 0.8},
        {
            "policy": "safe but dear",
            "strategy": "none",
            "sessions": 3,
            "refused": 0,
            "over_ceiling": 0,
            "cost_usd": 3.0,
            "cost_vs_recorded": 1.0,
        },
    ]
    rec = recommend(rows)
    assert rec["policy"] == "safe"
    assert "2 cheaper ones" in rec["why"]
    assert recommend(rows[:2])["policy"] is None
    # counts in words that agree with them: one safe policy, one cheaper, one refusing
    one = recommend([{**rows[1], "cost_not_comparable": "1 of 3 refused"}, rows[2]])["why"]  # cheaper than "safe", and refused
    assert one.startswith("the one policy with no request refused or over the ceiling; 1 cheaper one went over it or refused")
    assert one.endswith("; 1 refused requests, so its cost is not comparable")


def test_a_real_sweep_recommends_a_policy_that_kept_every_request_under_its_ceiling(tmp_path):
    paths = _fleet(tmp_path)
    points = grid(ceilings=["9000", "none"], strategies=["none", "adr"])
    out = summarise(run_local(paths, points, workers=1), points)
    chosen = next(p for p in out["policies"] if p["policy"] == out["recommendation"]["policy"])
    assert chosen["over_ceiling"] == 0 and chosen["refused"] == 0
    over = [p for p in out["policies"] if p["over_ceiling"]]
    assert over, "the `none` strategy under a ceiling of 9000 must go over it on these sessions"


def test_costs_are_modelled_against_the_modelled_recording_with_the_bill_beside(tmp_path, capsys, corpus_dev):
    path = str(corpus_dev / "claude_code" / "session-9eda1058.jsonl")  # real usage: the bill is the reported usage
    (point,) = grid(ceilings=["none"], strategies=["none"])
    result = tune_session(path, [point])
    (row,) = result["rows"]
    (base,) = _replay_totals(capsys, path, "--ceiling", "none", "--strategy", "recorded")
    assert row["recorded_modelled_cost_usd"] == base["modelled_cost_usd"]
    assert result["bill_usd"] == base["cost_usd"] and base["reported_requests"] > 0
    assert result["bill_usd"] != row["recorded_modelled_cost_usd"]  # the model is not the bill


def test_cancel_stops_the_sweep_and_leaves_no_worker_running(tmp_path):
    paths = _fleet(tmp_path, sizes=(4, 4, 4, 4, 4, 4))
    cancel = threading.Event()
    seen = []
    with pytest.raises(Cancelled):
        for result in run_local(paths, grid(strategies=["adr"]), workers=2, cancel=cancel):
            seen.append(result)
            cancel.set()
    assert len(seen) == 1
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_fails_its_session_by_name_and_the_sweep_ends(tmp_path):
    import os
    import signal

    paths = _fleet(tmp_path, sizes=(4, 4))
    stuck = tmp_path / "stuck.json"
    stuck.write_text("{}")
    results = []
    stream = run_local([str(stuck), *paths], grid(strategies=["adr"]), workers=2, task=stall_on_stuck)
    for result in stream:
        results.append(result)
        if len(results) == len(paths):  # every other session is done: only the stuck one is held
            for child in multiprocessing.active_children():
                os.kill(child.pid, signal.SIGKILL)
    assert len(results) == 3
    failed = [r for r in results if "error" in r]
    assert [r["file"] for r in failed] == [str(stuck)]
    assert "killed by SIGKILL" in failed[0]["error"] and str(stuck) in failed[0]["error"]
    assert multiprocessing.active_children() == []


def test_a_remote_path_is_read_through_fsspec(tmp_path):
    pytest.importorskip("fsspec")
    (path,) = _fleet(tmp_path, sizes=(4,))
    (point,) = grid(strategies=["none"])
    url = f"file://{path}"
    assert session_paths([f"file://{tmp_path}"]) == [url]
    remote, local = tune_session(url, [point]), tune_session(path, [point])
    assert remote["rows"] == local["rows"]


def test_the_demo_is_one_session_among_many(tmp_path):
    out = summarise([tune_session(str(demo_path()), [PolicyPoint("p", "adr", "20000")])], [PolicyPoint("p", "adr", "20000")])
    assert out["sessions"] == 1 and out["policies"][0]["requests"] > 0


def test_a_grid_field_reads_commas_and_repetition_alike():
    assert grid_items(["a,b", " c ", ""]) == grid_items("a, b,c") == ["a", "b", "c"]
    assert grid_numbers("0.8, 0.9", float, "f", "k") == [0.8, 0.9]
    assert grid_numbers(["4000", "none"], int, "f", "k") == [4000, None]
    assert grid_numbers("", float, "f", "k") == [None]  # empty: the session's own value
    assert grid_cachings("on,off", "c") == [True, False]
    assert grid_cachings(None, "c") == [None]


def test_a_bad_grid_value_is_refused_naming_its_field_and_the_value():
    with pytest.raises(PolicyError) as bad:
        grid_numbers("0.8,high", float, "--fold-at", "fold-at")
    assert str(bad.value).startswith("--fold-at") and "'high' is not a number" in str(bad.value)
    with pytest.raises(PolicyError, match="'maybe' is not on or off"):
        grid_cachings("on,maybe", "--caching")
    with pytest.raises(PolicyError, match="'none' is not a number"):
        grid_numbers("none", float, "--target", "target")  # `none` is no bound, not a fraction


def test_tune_refuses_a_bad_grid_value_in_one_line(tmp_path, capsys):
    paths = _fleet(tmp_path, sizes=(4,))
    assert main(["tune", *paths, "--fold-at", "0.8,high"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--fold-at" in err[0] and "'high' is not a number" in err[0]


SMALL = "codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"  # one request, unseen head 34k


def test_a_sweep_sets_each_policy_beside_the_modelled_recording_and_a_refusing_policys_cost_is_not_comparable(capsys, corpus_dev):
    """Issue 41, findings 3 and 4 in tune: the modelled recording stands beside the policies, the bill is the bill,
    and a policy that refused requests (here every one: the ceiling is under the file's unseen head) is not free."""
    path = str(corpus_dev / SMALL)
    points = grid(ceilings=["20000", "none"], strategies=["adr"])
    out = summarise([tune_session(path, points)], points)
    refusing, free = out["policies"]
    (base,) = _replay_totals(capsys, path, "--ceiling", "20000", "--strategy", "recorded")
    for p in (refusing, free):
        assert p["recorded_modelled_cost_usd"] == round(base["modelled_cost_usd"], 6)  # the comparison, both
        assert p["bill_usd"] == round(base["cost_usd"], 6)  # the recording as billed (reported usage priced)
    assert refusing["refused"] == 1 and refusing["cost_usd"] is None and refusing["cost_vs_recorded"] is None
    assert "not comparable" in refusing["cost_not_comparable"]
    assert free["cost_not_comparable"] is None and free["cost_usd"] == pytest.approx(base["modelled_cost_usd"])
    assert "1 refused requests, so its cost is not comparable" in out["recommendation"]["why"]
    assert main(["tune", path, "--ceiling", "20000,none", "--workers", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "recorded, modelled" in next(line for line in lines if line.startswith("policy"))
    row = next(line for line in lines if line.startswith("adr, ceiling 20,000"))
    assert "not comparable" in row and "$0.0000" not in row
    assert (refusing["no_ceiling"], free["no_ceiling"]) == (0, 1)  # finding 3: with no ceiling adr never acts
    assert [line for line in lines if "no ceiling in" in line] == [
        f"{free['policy']}: no ceiling in 1 of 1 sessions (none given, or auto on a model with one flat price tier), "
        "so adr does not act there; give one with --ceiling N (`foldscope replay FILE` names each session's agent "
        "window and compaction point)"
    ]
    assert f"${base['modelled_cost_usd']:,.4f}" in row and f"${base['cost_usd']:,.4f}" in row


def test_the_dask_engine_without_a_loopback_says_so_in_one_line_at_once(tmp_path):
    import shutil
    import subprocess
    import sys
    import time

    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed: no way to take the loopback away here")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -n is not allowed here ({probe.stderr.decode().strip()})")
    paths = _fleet(tmp_path, sizes=(4,))
    start = time.monotonic()
    done = subprocess.run(
        ["unshare", "-n", sys.executable, "-m", "foldscope", "tune", *paths, "--engine", "dask", "--ceiling", "3000"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - start
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "loopback" in done.stderr and "--engine local" in done.stderr
    assert elapsed < 20  # Dask alone would time out after 30 s


def test_tune_refuses_its_outputs_before_the_sweep_runs(tmp_path, capsys, monkeypatch):
    from foldscope.core.cli import tune as tune_cli

    paths = _fleet(tmp_path, sizes=(4,))
    monkeypatch.setattr(tune_cli, "run_engine", lambda *a, **k: pytest.fail("the sweep ran before its outputs were checked"))
    assert main(["tune", *paths, "--ceiling", "3000", "-o", paths[0].removesuffix(".json")]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
