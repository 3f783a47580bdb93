"""The model's context window and the agent's compaction point: the file's own figure first, each named by its source."""

from __future__ import annotations

from foldscope.core.formats import load_session
from foldscope.core.readout.agent_limits import agent_limits
from tests.core.live_sessions import append, rounds
from tests.core.readout import window_files


def test_a_codex_file_states_its_own_context_window(corpus_dev):
    path = sorted((corpus_dev / "codex").glob("*.jsonl"))[0]
    stated = [line for line in path.read_text().splitlines() if '"model_context_window"' in line]
    session = load_session(path)
    limits = agent_limits(session)
    assert stated and limits.window is not None and limits.window.source == "the file's model_context_window"
    assert f'"model_context_window":{limits.window.tokens}' in stated[-1].replace(" ", "")
    assert limits.compaction is not None and limits.compaction.tokens < limits.window.tokens


def test_claude_code_compacts_before_its_window_by_its_documented_rule(tmp_path):
    path = tmp_path / "s.jsonl"
    append(path, rounds(0, 2))
    limits = agent_limits(load_session(path))
    assert limits.window is not None and limits.window.tokens == 200_000
    assert limits.compaction is not None and limits.compaction.tokens == 167_000 and "auto-compact" in limits.compaction.source


def test_a_recorded_automatic_compaction_names_the_point(tmp_path):
    path = tmp_path / "s.jsonl"
    append(path, rounds(0, 2))
    session = load_session(path)
    session.events.append({"kind": "compaction", "trigger": "auto", "pre_tokens": 155_321})
    limits = agent_limits(session)
    assert limits.compaction is not None and limits.compaction.tokens == 155_321


def test_the_window_is_the_one_the_document_shows(corpus_dev):
    from foldscope.core.readout.opening import build_document

    for path in (corpus_dev / "claude_code" / "session-196820da.jsonl", sorted((corpus_dev / "codex").glob("*.jsonl"))[0]):
        session = load_session(path)
        document = build_document(session, str(path))
        window = agent_limits(session).window
        assert window is not None and document.context_window == window.tokens, path.name


# The window's order: the policy's, the file's statement, the agent's rule for the model as written, a window
# implied by recorded automatic compactions, the prices, the agent's default. One test per rule, on files made
# small here in the dev corpus's Claude Code shape (tests/core/readout/window_files.py), each naming its source.


def window_of(path, policy=None):
    from foldscope.core.readout.agent_limits import context_window

    window = context_window(load_session(path), policy)
    assert window is not None
    return window


def test_the_files_own_statement_comes_before_the_price_list(corpus_dev):
    from foldscope.core.model import pricing

    for path in sorted((corpus_dev / "codex").glob("*.jsonl")):
        session = load_session(path)
        listed = pricing.resolve(session.model).context_window
        window = window_of(path)
        assert window.kind == "file" and window.tokens == session.extras["context_window"] == 258_400, path.name
        assert listed is not None and listed != window.tokens  # the prices say otherwise, and the file wins


def test_claude_code_runs_a_claude_model_in_200000_tokens_unless_it_is_named_with_1m(tmp_path):
    from foldscope.core.model import pricing

    assert pricing.resolve("claude-opus-4-6").context_window == 1_000_000  # what the prices list, which Claude Code does not use
    plain = window_of(window_files.claude_code_file(tmp_path / "plain.jsonl", "claude-opus-4-6"))
    assert (plain.tokens, plain.kind) == (200_000, "agent")
    assert plain.source == "Claude Code's rule for claude-opus-4-6: 200,000 unless named with [1m]"
    wide = window_of(window_files.claude_code_file(tmp_path / "wide.jsonl", "claude-opus-4-6[1m]"))
    assert (wide.tokens, wide.kind) == (1_000_000, "agent") and "[1m]" in wide.source
    alias = window_of(window_files.claude_code_file(tmp_path / "alias.jsonl", "sonnet[1m]"))
    assert alias.tokens == 1_000_000


def test_the_agents_rule_stands_and_names_the_price_list_its_compactions_contradict(tmp_path):
    """The issue's session: claude-opus-4-6, compacted automatically at 170,251 and 167,117."""
    path = window_files.claude_code_file(tmp_path / "s.jsonl", "claude-opus-4-6", (170_251, 167_117))
    limits = agent_limits(load_session(path))
    window = limits.window
    assert window is not None and (window.tokens, window.kind) == (200_000, "agent")
    assert window.note == (
        "not the 1,000,000 the prices list for claude-opus-4-6: the file's automatic compactions at 170,251 and 167,117 are 17% of that"
    )
    assert window.said == f"{window.source}; {window.note}"
    assert limits.compaction is not None and limits.compaction.tokens == 167_117


def test_the_agents_rule_is_said_to_disagree_with_a_compaction_far_below_it(tmp_path):
    path = window_files.claude_code_file(tmp_path / "s.jsonl", "claude-opus-4-6[1m]", (300_000,))
    window = window_of(path)
    assert window.tokens == 1_000_000 and window.note == "though the file's automatic compaction at 300,000 is 30% of it"


def test_a_recorded_automatic_compaction_implies_the_window_the_agent_has_no_rule_for(tmp_path):
    """Claude Code on a flat-tier model it has no rule for: its compaction at 170,000 is the 200,000-token window's
    (the window less 33,000), not the 400,000 the prices list, and the window says the price list disagrees."""
    from foldscope.core.model import pricing

    listed = pricing.resolve("gpt-5")
    assert listed.context_window == 400_000 and listed.first_boundary is None  # one flat price tier
    window = window_of(window_files.claude_code_file(tmp_path / "a.jsonl", "gpt-5", (170_000,)))
    assert (window.tokens, window.kind) == (200_000, "compaction")
    assert "implied by the file's automatic compaction at 170,000" in window.source
    assert window.note == "not the 400,000 the prices list for gpt-5: the file's automatic compaction at 170,000 is 42% of that"
    # A compaction the listed window allows: the prices' figure is the one implied, and nothing disagrees.
    agrees = window_of(window_files.claude_code_file(tmp_path / "b.jsonl", "gpt-5", (380_000,)))
    assert (agrees.tokens, agrees.kind, agrees.note) == (400_000, "compaction", "")
    # A window is never smaller than what was compacted at: past every candidate, the largest window it allows.
    past = window_of(window_files.claude_code_file(tmp_path / "c.jsonl", "gpt-5", (600_000,)))
    assert (past.tokens, past.kind) == (633_000, "compaction")
    assert past.note == "not the 400,000 the prices list for gpt-5: the file's automatic compaction at 600,000 is larger"


def test_a_manual_compaction_implies_no_window(tmp_path):
    path = window_files.claude_code_file(tmp_path / "s.jsonl", "gpt-5", (170_000,), trigger="manual")
    assert window_of(path).kind == "prices"


def test_the_price_list_comes_before_the_agents_default(tmp_path):
    window = window_of(window_files.claude_code_file(tmp_path / "s.jsonl", "gpt-5"))
    assert (window.tokens, window.kind) == (400_000, "prices")
    assert window.source == "the context window the prices list for gpt-5"


def test_the_agents_default_is_the_last_word(tmp_path):
    window = window_of(window_files.claude_code_file(tmp_path / "s.jsonl", "a-local-model"))
    assert (window.tokens, window.kind, window.source) == (200_000, "default", "Claude Code's default window")


def test_a_window_set_in_the_policy_overrides_every_other_source(tmp_path, corpus_dev):
    from foldscope.core.model.policy import Policy

    policy = Policy(context_window=150_000, source="flags")
    codex = sorted((corpus_dev / "codex").glob("*.jsonl"))[0]
    compacted = window_files.claude_code_file(tmp_path / "s.jsonl", "claude-opus-4-6", (170_251,))
    for path in (codex, compacted):
        window = window_of(path, policy)
        assert (window.tokens, window.kind, window.source) == (150_000, "policy", "set by context_window in the policy from flags")
        assert window.note == ""


def test_the_document_reads_the_window_under_its_policy(tmp_path):
    from foldscope.core.model.policy import Policy
    from foldscope.core.readout.opening import build_document

    path = window_files.claude_code_file(tmp_path / "s.jsonl", "claude-opus-4-6", (170_251, 167_117))
    document = build_document(load_session(path), str(path))
    assert document.context_window == 200_000 and document.window_source.startswith("Claude Code's rule")
    chosen = build_document(load_session(path), str(path), policy=Policy(context_window=120_000, source="flags"))
    assert (chosen.context_window, chosen.window_source) == (120_000, "set by context_window in the policy from flags")


def test_claude_code_files_of_the_dev_corpus_with_compactions_take_the_agents_200000(corpus_dev):
    files = [p for p in sorted((corpus_dev / "claude_code").rglob("*.jsonl")) if '"compact_boundary"' in p.read_text(encoding="utf-8")]
    assert files, "the dev corpus holds a Claude Code file with a compaction"
    for path in files:
        session = load_session(path)
        assert any(e.get("kind") == "compaction" for e in session.events), path.name
        window = window_of(path)
        assert (window.tokens, window.kind) == (200_000, "agent"), path.name
        assert window.source == f"Claude Code's rule for {session.model}: 200,000 unless named with [1m]"


def test_a_window_no_larger_than_what_the_rule_reserves_has_no_compaction_point(tmp_path):
    """Claude Code's rule (the window less 33,000) and pi's (less 16,384) gave a point below zero in a small window (a
    model behind a proxy, --context-window, Claude Code's status line input): '-139% of compaction -32,000'."""
    from foldscope.core.formats.registry import format_named
    from foldscope.core.model.policy import Policy
    from foldscope.core.readout.status import under_agent_window

    for name, reserved in (("claude_code", 33_000), ("pi", 16_384)):
        spec = format_named(name)
        assert spec is not None
        assert spec.compaction(reserved) is None and spec.compaction(1_000) is None, name
        assert spec.compaction(reserved + 1) == (1, spec.compaction(reserved + 1)[1]), name
    path = tmp_path / "s.jsonl"
    append(path, rounds(0, 2))
    limits = agent_limits(load_session(path), Policy(context_window=30_000))
    assert limits.window is not None and limits.window.tokens == 30_000 and limits.compaction is None
    figures = {
        "next": {"size": 500, "estimate": 500, "agent": [{"name": "context window", "tokens": 200_000, "source": "s"}], "policy": []}
    }
    said = under_agent_window(figures, 1_000)["next"]
    assert [lim["name"] for lim in said["agent"]] == ["context window"] and said["reached"] == []
