"""A summary of many sessions' usage and cost needs no tokenising: `replay DIR --strategy recorded` and `sessions`
read the reported usage and price it per request, and their totals are the tokenised recorded replay's exactly."""

from __future__ import annotations

import json

import pytest

import foldscope.core.request.tokens as tokens
from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import ReadError
from foldscope.core.replay.billed import COUNT_TOTALS, billed_summary
from foldscope.core.replay.lab import replay_runs
from foldscope.core.request.measure import Measure

AGENTS = ("claude_code", "codex", "pi")
SHARED = (
    "strategy",
    "requests",
    "refused",
    "fresh",
    "cache_read",
    "cache_write",
    "cache_write_1h",
    "output",
    "folds",
    "cost_usd",
    "reported_requests",
    "reported_over_ceiling",
)


def corpus_files(corpus_dev, agents=AGENTS + ("lionagi",)):
    out = []
    for agent in agents:
        for path in sorted((corpus_dev / agent).rglob("*")):
            if path.is_file():
                out.append(path)
    return out


def no_tokenising(monkeypatch):
    def refuse():
        raise AssertionError("tokenised")

    monkeypatch.setattr(tokens, "encoding", refuse)


@pytest.mark.parametrize("ceiling", [None, 100_000])
def test_the_untokenised_recorded_totals_equal_the_tokenised_runs_exactly_on_the_dev_corpus(corpus_dev, ceiling):
    policy = Policy(max_input_tokens=ceiling)
    compared = 0
    for path in corpus_files(corpus_dev):
        try:
            session = load_session(str(path))
        except ReadError:
            continue
        summary = billed_summary(session, policy)
        if summary is None:  # a request reported no usage: its recorded figures need the cache model
            assert any(r.usage is None for r in session.trace) or not session.trace
            continue
        counted = replay_runs(session, ["recorded"], Measure(load_session(str(path)), policy)).runs[0].totals()
        untokenised = summary["totals"][0]
        assert {k: untokenised[k] for k in SHARED} == {k: counted[k] for k in SHARED}, path.name
        assert all(untokenised[k] is None for k in COUNT_TOTALS) and untokenised["counted"] is False
        compared += 1
    assert compared >= 20  # the dev corpus's Claude Code, Codex and pi sessions, the handmade ones among them


def test_the_untokenised_summary_tokenises_nothing(corpus_dev, monkeypatch):
    sessions = [load_session(str(p)) for p in corpus_files(corpus_dev, AGENTS)]
    no_tokenising(monkeypatch)
    with pytest.raises(AssertionError, match="tokenised"):  # the guard holds: counting does tokenise
        Measure(sessions[0]).count(sessions[0].view_messages())
    summaries = [billed_summary(s, Policy()) for s in sessions]
    assert all(s is not None for s in summaries)
    assert sum(s["totals"][0]["cost_usd"] or 0 for s in summaries) > 50  # the corpus's bill, priced


def link_folder(tmp_path, corpus_dev, agents=AGENTS):
    folder = tmp_path / "sessions"
    folder.mkdir()
    for path in corpus_files(corpus_dev, agents):
        (folder / str(path.relative_to(corpus_dev)).replace("/", "__")).symlink_to(path)
    return folder


def test_replay_folder_recorded_reads_the_reported_usage_and_count_asks_for_the_counted_figures(tmp_path, corpus_dev, monkeypatch, capsys):
    folder = link_folder(tmp_path, corpus_dev)
    assert main(["replay", str(folder), "--strategy", "recorded", "--json", "--count", "--workers", "1"]) == 0
    counted = json.loads(capsys.readouterr().out)["table"]
    assert all(isinstance(r["peak"], int) and r["modelled_cost_usd"] is not None for r in counted if r["cost_usd"])
    no_tokenising(monkeypatch)
    assert main(["replay", str(folder), "--strategy", "recorded", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)["table"]
    assert len(table) == len(counted) >= 20
    assert all(r["counted"] is False and r["peak"] is None for r in table)
    assert [{k: r[k] for k in SHARED} for r in table] == [{k: r[k] for k in SHARED} for r in counted]
    assert main(["replay", str(folder), "--strategy", "recorded"]) == 0
    text = capsys.readouterr().out
    assert "nothing tokenised" in text and "reported peak" in text


def test_a_session_that_reported_no_usage_is_counted_in_the_folder_summary(tmp_path, corpus_dev, capsys):
    folder = link_folder(tmp_path, corpus_dev, ("lionagi",))
    assert main(["replay", str(folder), "--strategy", "recorded", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)["table"]
    unreported = [r for r in table if r["reported_requests"] < r["requests"]]
    assert unreported and all("counted" not in r and isinstance(r["peak"], int) for r in unreported)


def test_sessions_lists_every_corpus_session_priced_without_tokenising(tmp_path, corpus_dev, monkeypatch, capsys):
    home = tmp_path / "home"
    places = {
        "claude_code": home / ".claude" / "projects" / "p",
        "codex": home / ".codex" / "sessions" / "2026",
        "pi": home / ".pi" / "agent" / "sessions" / "p",
    }
    for agent, place in places.items():
        place.mkdir(parents=True)
        for path in sorted((corpus_dev / agent).glob("*.jsonl")):
            name = path.name if agent != "codex" else f"rollout-{path.name.removeprefix('rollout-')}"
            (place / name).symlink_to(path)
    monkeypatch.setenv("HOME", str(home))
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR"):
        monkeypatch.delenv(variable, raising=False)
    no_tokenising(monkeypatch)
    assert main(["sessions", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sessions"]
    assert len(rows) >= 15 and all(r["problem"] is None for r in rows)
    for row in rows:
        session = load_session(row["path"])
        if session.children:
            continue  # sessions rolls a parent's subagents in; the recorded replay is the file's own requests
        billed = billed_summary(session, Policy())["totals"][0]
        assert row["requests"] == billed["requests"]
        assert row["cost_usd"] == pytest.approx(billed["cost_usd"], abs=1e-5)


def test_a_session_that_switches_models_is_summarised_at_each_requests_own_price_as_the_replay_bills_it(corpus_dev):
    from dataclasses import replace

    # The dev corpus's real sessions keep one model per billed request: switch the middle third to haiku.
    path = str(corpus_dev / "claude_code" / "extracted-dd381a75.jsonl")
    sessions = [load_session(path), load_session(path)]
    for session in sessions:
        n = len(session.trace)
        session.trace = [replace(r, model="claude-haiku-4-5-20251001") if n // 3 <= r.index < 2 * n // 3 else r for r in session.trace]
    untokenised = billed_summary(sessions[0], Policy())["totals"][0]
    counted = replay_runs(sessions[1], ["recorded"], Measure(sessions[1])).runs[0].totals()
    assert untokenised["cost_usd"] == counted["cost_usd"]
    unswitched = billed_summary(load_session(path), Policy())["totals"][0]
    assert untokenised["cost_usd"] < unswitched["cost_usd"] * 0.9
