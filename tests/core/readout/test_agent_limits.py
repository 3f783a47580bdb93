"""The model's context window and the agent's compaction point: the file's own figure first, each named by its source."""

from __future__ import annotations

from foldscope.core.formats import load_session
from foldscope.core.readout.agent_limits import agent_limits
from tests.core.live_sessions import append, rounds


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
    from foldscope.core.readout.document import build_document

    for path in (corpus_dev / "claude_code" / "session-196820da.jsonl", sorted((corpus_dev / "codex").glob("*.jsonl"))[0]):
        session = load_session(path)
        document = build_document(session, str(path))
        window = agent_limits(session).window
        assert window is not None and document.context_window == window.tokens, path.name
