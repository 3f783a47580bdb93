"""A followed session grown in place shows what opening the whole file shows; the next request names its limits."""

from __future__ import annotations

from foldscope.core.formats import load_session
from foldscope.core.formats.follow import Follower
from foldscope.core.readout.live import crossed, grow_document, next_request
from foldscope.core.readout.opening import build_document


def test_a_document_grown_step_by_step_equals_the_whole_file_opened(corpus_dev, tmp_path):
    source = corpus_dev / "claude_code" / "session-196820da.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    live = tmp_path / source.name
    live.write_bytes(b"".join(lines[:40]))
    document = build_document(load_session(live), str(live))
    follower = Follower(live)
    follower.poll()
    grow_document(document, follower.session())
    for start in range(40, len(lines), 37):
        with open(live, "ab") as handle:
            handle.write(b"".join(lines[start : start + 37]))
        follower.poll()
        grow_document(document, follower.session())
    whole = build_document(load_session(live), str(live))
    assert document.tokens == whole.tokens and document.chars == whole.chars
    assert [(r.estimate, r.own_count, r.reported_input) for r in document.requests] == [
        (r.estimate, r.own_count, r.reported_input) for r in whole.requests
    ]
    assert document.now_size == whole.now_size and document.unseen_head == whole.unseen_head
    assert document.now_predicted == whole.now_predicted and document.next_basis == whole.next_basis


def test_a_followed_document_equals_a_fresh_open_at_each_line_and_measures_only_what_it_gained(corpus_dev, tmp_path):
    # grow_document's trace goes on from the last poll's pass (core.request.trace_resume): at each of the last 30
    # lines every figure the document shows is the one opening the file there gives.
    source = corpus_dev / "claude_code" / "session-196820da.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    live = tmp_path / source.name
    live.write_bytes(b"".join(lines[:-30]))
    document = build_document(load_session(live), str(live))
    follower = Follower(live)
    follower.poll()
    grow_document(document, follower.session())
    went_on = 0
    for line in lines[-30:]:
        with open(live, "ab") as handle:
            handle.write(line)
        follower.poll()
        grow_document(document, follower.session())
        went_on += document._live_resume.resumed > 0
        fresh = build_document(load_session(live), str(live))
        assert document.tokens == fresh.tokens and document.chars == fresh.chars and document.record_count == fresh.record_count
        assert document.requests == fresh.requests
        assert (document.now_size, document.now_predicted, document.unseen_head, document.scale) == (
            fresh.now_size,
            fresh.now_predicted,
            fresh.unseen_head,
            fresh.scale,
        )
        assert document.next_basis == fresh.next_basis and document.folds == fresh.folds
    assert went_on >= 15, went_on


def test_the_next_request_reads_the_agent_limits_by_its_size_and_the_policy_by_its_estimate(corpus_dev):
    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    document = build_document(session, session.source)
    nxt = next_request(document)
    names = [lim.name for lim in nxt.agent + nxt.policy]
    assert names == ["context window", "compaction point", "line", "ceiling"]
    expected = document.now_predicted or document.now_size
    assert nxt.size == expected and nxt.estimate == document.now_size
    assert nxt.reached == {lim.name for lim in nxt.agent if nxt.size >= lim.tokens} | {
        lim.name for lim in nxt.policy if nxt.estimate >= lim.tokens
    }
    assert nxt.text().startswith(f"next request: {nxt.size_name} {nxt.size:,}")


def test_a_crossing_is_noticed_once(corpus_dev):
    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    document = build_document(session, session.source)
    nxt = next_request(document)
    assert crossed(None, nxt) == [lim.name for lim in nxt.agent + nxt.policy if lim.name in nxt.reached]
    assert crossed(nxt, nxt) == []


def test_follow_mode_reads_the_next_request_against_the_agents_window_and_a_window_the_policy_sets(tmp_path):
    """The issue's session on claude-opus-4-6: its share of Claude Code's 200,000, not of the prices' 1,000,000."""
    from foldscope.core.model.policy import Policy
    from tests.core.readout.window_files import claude_code_file

    path = claude_code_file(tmp_path / "s.jsonl", "claude-opus-4-6", (170_251, 167_117))
    document = build_document(load_session(path), str(path))
    window = next_request(document).agent[0]
    assert (window.name, window.tokens) == ("context window", 200_000) and window.source == document.window_source
    assert f"{next_request(document).size / 200_000:.0%} of the context window 200,000" in next_request(document).text()
    document.policy = Policy(context_window=120_000, source="flags")
    assert next_request(document).agent[0].tokens == 120_000
