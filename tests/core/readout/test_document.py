"""Why a message is out of the view, as the record panel says it."""

from __future__ import annotations

from foldscope.core.formats import claude_code
from foldscope.core.readout.document import out_reasons


def test_messages_of_an_abandoned_branch_are_shown_as_such(corpus_dev):
    session = claude_code.read(corpus_dev / "claude_code" / "extracted-dd381a75.jsonl")
    in_view = {session.record.index_of(m) for m in session.view}
    reasons = out_reasons(session, in_view)
    (rewind,) = [e for e in session.events if e["kind"] == "branch" and e["line"] == 20]
    for mid in rewind["abandoned"]:
        assert reasons[session.record.index_of(mid)].startswith("on an abandoned branch: line 20 went back to line 4")
