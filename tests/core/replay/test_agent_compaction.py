"""The agent's own compaction replayed at its knob: Claude Code's compactions where the file put them, the summary the
size the session's own were, and the knob written as each agent spells it (checked against its documentation)."""

from __future__ import annotations

import pytest

from foldscope.core.forensics.compactions import find_compactions
from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.readout.agent_limits import agent_limits, automatic_compactions
from foldscope.core.replay.advice import settings_for
from foldscope.core.replay.agent_settings import KNOBS, agent_setting, compaction_point
from foldscope.core.replay.lab import run_strategy
from foldscope.core.replay.layouts import Layouts
from foldscope.core.replay.strategies import summary_model
from foldscope.core.replay.tune import PolicyPoint, compact_points
from foldscope.core.request.measure import Measure
from foldscope.core.request.tokens import count_text
from tests.core.forensics.traces import write_claude_code
from tests.core.replay.compacting_files import POINT, SUMMARY, compacting_file
from tests.paths import corpus_glob


def _replayed(session, point: int):
    """The compaction strategy with the agent's point, over the agent's window as the ceiling."""
    window = agent_limits(session).window
    layouts = Layouts(Measure(session, Policy(max_input_tokens=window.tokens)))
    layouts.compact_point = point
    return run_strategy(session, "compaction", layouts)


def _positions(run) -> list[int]:
    return [row.request for row in run.rows if row.kind == "summary"]


def _within_one(replayed: list[int], recorded: list[int]) -> bool:
    return len(replayed) == len(recorded) and all(abs(a - b) <= 1 for a, b in zip(replayed, recorded, strict=True))


def _dev_sessions_with_automatic_compactions():
    out = []
    for path in corpus_glob("claude_code/**/*.jsonl"):
        session = load_session(str(path))
        carried = [k for k, note in find_compactions(session) if note.metadata.get("compaction")]
        if automatic_compactions(session) and carried:
            out.append((path, session, carried))
    return out


def test_replaying_claude_codes_compaction_at_the_files_own_threshold_puts_its_compactions_within_one_request_on_dev():
    found = _dev_sessions_with_automatic_compactions()
    if not found:
        pytest.skip("no Claude Code session in the dev corpus holds an automatic compaction a request carried")
    for path, session, carried in found:
        point = agent_limits(session).compaction.tokens  # the file's own: the size before its last automatic compaction
        assert _within_one(_positions(_replayed(session, point)), carried), path.name


def test_replaying_claude_codes_compaction_at_the_files_own_threshold_puts_its_compactions_within_one_request(tmp_path):
    path = tmp_path / "compacting.jsonl"
    recorded = compacting_file(path)
    session = load_session(str(path))
    assert [k for k, _ in find_compactions(session)] == recorded and len(recorded) == 4
    shown = agent_limits(session).compaction.tokens  # the size before the file's last automatic compaction
    assert _within_one(_positions(_replayed(session, shown)), recorded)
    # The agent's own rule (the window less 33,000), from the knob's default: every compaction where the file has it.
    rule = compaction_point("claude_code", 1.0, 200_000)[0]
    assert rule == POINT
    assert _positions(_replayed(session, rule)) == recorded
    # A knob set lower compacts earlier and more often: the replay follows the knob, not the recording.
    assert len(_positions(_replayed(session, compaction_point("claude_code", 0.5, 200_000)[0]))) > len(recorded)


def test_the_replayed_summary_is_the_size_of_the_sessions_own_summaries_so_the_request_after_matches_the_reported_input(tmp_path):
    path = tmp_path / "compacting.jsonl"
    recorded = compacting_file(path)
    session = load_session(str(path))
    model = summary_model(session)
    assert model.compactions == 4 and model.tokens == count_text(SUMMARY)
    assert model.before is not None and model.before >= POINT
    run = _replayed(session, POINT)
    after = {row.request: row.estimate for row in run.rows if row.kind == "request" and row.folds}
    for k in recorded:  # the request after each compaction, replayed, against what the provider counted for it
        reported = session.trace[k].usage.reported_input
        assert abs(after[k] - reported) <= 0.01 * reported, (k, after[k], reported)


def test_the_replayed_summary_call_outputs_what_the_sessions_own_summariser_reported(tmp_path):
    session = load_session(write_claude_code(tmp_path))  # its agent-acompact file reported 900 output tokens
    assert summary_model(session).output == 900
    summaries = [row for row in _replayed(session, 1_000).rows if row.kind == "summary"]
    assert summaries and {row.output for row in summaries} == {900}


def test_a_session_without_compactions_of_its_own_keeps_the_deterministic_brief(corpus_dev):
    session = load_session(str(corpus_dev / "claude_code" / "short.jsonl"))
    model = summary_model(session)
    assert model.tokens is None and model.compactions == 0


# Each agent's compaction knob as its own documentation names it, written here from the source, not from the code:
# Claude Code: https://code.claude.com/docs/en/settings (autoCompactWindow, 100,000 to 1,000,000 tokens; it compacts at
# that less 33,000: anthropics/claude-code#31806's threshold code)
# Codex: https://github.com/openai/codex/blob/main/docs/config.md (model_auto_compact_token_limit, tokens, config.toml)
# pi: pi-mono packages/coding-agent/docs/settings.md (compaction.reserveTokens, default 16384, settings.json)
# Cline: cline/cline src/core/storage/utils/state-helpers.ts (autoCondenseThreshold, default 0.75; useAutoCondense)
# Gemini CLI: gemini-cli docs/get-started/configuration.md (model.compressionThreshold, default 0.5, settings.json)
DOCUMENTED = {
    "claude_code": ("autoCompactWindow", "~/.claude/settings.json", "173000"),
    "codex": ("model_auto_compact_token_limit", "~/.codex/config.toml", "140000"),
    "pi": ("compaction.reserveTokens", "~/.pi/agent/settings.json", "60000"),
    "cline": ("autoCondenseThreshold", "useAutoCondense", "0.7"),
    "gemini_cli": ("model.compressionThreshold", "~/.gemini/settings.json", "0.7"),
    # review11: Qwen Code got no setting; its configuration page documents this one (default 0.7, 0 turns it off)
    "qwen_code": ("model.chatCompression.contextPercentageThreshold", "~/.qwen/settings.json", "0.7"),
}


def test_a_compaction_recommendation_is_written_as_each_agents_documented_setting():
    point = compact_points([0.7])[0]
    rows = [{"agent": agent, "window": 200_000} for agent in DOCUMENTED] + [{"agent": "lionagi", "window": 200_000}]
    settings = {s["agent"]: s for s in settings_for(point, rows)}
    assert set(settings) == {*DOCUMENTED, "lionagi"}
    for agent, (key, where, value) in DOCUMENTED.items():
        s = settings[agent]
        assert (s["key"], s["value"]) == (key, value), agent
        assert where in s["where"] or where in s["line"], agent
        assert key.split(".")[-1] in s["line"] and value in s["line"], agent
        assert s["source"].startswith("https://"), agent
    # Where each puts the compaction: 0.7 of 200,000 (Claude Code's window set 33,000 past it).
    assert {a: settings[a]["compacts_at"] for a in DOCUMENTED} == dict.fromkeys(DOCUMENTED, 140_000)


def test_claude_codes_window_setting_past_its_own_point_changes_nothing_and_under_its_least_compacts_at_its_least():
    """Claude Code compacts at its window less 33,000, the window the model's or autoCompactWindow (100,000 to
    1,000,000) where lower: CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, offered before, is reported ignored from settings.json
    (anthropics/claude-code#63186) and to have stopped working (#82761)."""
    high = agent_setting("claude_code", 0.9, 200_000)  # 180,000 wanted: past its own 167,000
    assert high["compacts_at"] == POINT and high["value"] == "200000" and "unset does the same" in high["note"]
    low = agent_setting("claude_code", 0.3, 200_000)  # 60,000 wanted: the setting's least, 100,000, compacts at 67,000
    assert (low["value"], low["compacts_at"]) == ("100000", 67_000) and "at the least" in low["note"]
    big = agent_setting("claude_code", 0.3, 1_000_000)
    assert (big["value"], big["compacts_at"], big["line"]) == ("333000", 300_000, '"autoCompactWindow": 333000')


def test_the_lionagi_profile_a_recommendation_prints_loads_with_profile_as_the_same_policy(tmp_path):
    """review11: the profile was printed as a `tune --policies` entry (a name over the keys, `strategy` among them),
    which `--profile FILE` refused ("adr-100000: not a policy key"): saved as printed, it now loads as the policy,
    the strategy to replay it with named in its first line."""
    saved = tmp_path / "profile.yaml"
    for fraction in (0.5, 0.9):
        point = compact_points([fraction])[0]
        (profile,) = [s for s in settings_for(point, [{"agent": "claude_code", "window": 200_000}]) if s["agent"] == "lionagi"]
        saved.write_text(profile["yaml"])
        loaded = Policy.from_yaml(saved)
        assert (loaded.max_input_tokens, loaded.context_fold_at) == (200_000, fraction)
        assert profile["yaml"].splitlines()[0].endswith("--strategy compaction")
    fold = PolicyPoint("adr", "adr", "60000", 0.8, 0.5, 4000, True)
    (profile,) = settings_for(fold, [{"agent": "claude_code"}])
    saved.write_text(profile["yaml"])
    loaded = Policy.from_yaml(saved)
    assert (loaded.max_input_tokens, loaded.context_fold_at, loaded.context_fold_target, loaded.tool_result_max_chars) == (
        60000,
        0.8,
        0.5,
        4000,
    )
    assert loaded.prompt_caching is True and profile["yaml"].splitlines()[0].endswith("--strategy adr")


def test_every_agent_knob_names_a_documented_source():
    assert set(KNOBS) == set(DOCUMENTED)
