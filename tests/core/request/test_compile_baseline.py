"""With caching off, the compiled bytes of the build before issue 5 (caching places marks on the same blocks: test_caching_shape)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session
from foldscope.core.request.compile import compile_request, payload_bytes

BASELINE = Path(__file__).with_name("compile_baseline.json")


def input_digest(session: Session) -> str:
    """What the compiled requests are built from: every message, each request's view, the tools."""
    from foldscope.core.request.trace import build_trace, session_tools

    h = hashlib.sha256()
    for m in session.record:
        h.update(m.sha256().encode())
    for r in build_trace(session):
        h.update(json.dumps(list(r.view)).encode())
    h.update(json.dumps(session_tools(session), sort_keys=True).encode())
    return h.hexdigest()


def test_caching_off_compiles_the_bytes_of_the_build_before_issue_5_on_demo_and_corpus(corpus_dev):
    """compile_baseline.json holds, per session, the digest of every request compiled by the compiler as it
    stood before issue 5, and the digest of what those requests are built from. A file whose reader output
    has since changed is skipped (the old compiler is gone, so its bytes cannot be captured again)."""
    from foldscope.core.formats import load_session
    from foldscope.core.formats.demo import demo_path
    from foldscope.core.request.trace import build_trace, session_tools

    baseline = json.loads(BASELINE.read_text())
    checked = []
    for name, expected in baseline.items():
        path = demo_path() if name == "demo" else corpus_dev / name
        session = load_session(str(path))
        if input_digest(session) != expected["input"]:
            continue
        tools = session_tools(session)
        off = Policy(prompt_caching=False, context_fold_at=0.9, context_fold_target=0.5)
        h = hashlib.sha256()
        for k, r in enumerate(build_trace(session)):
            msgs = [session.record.get(m) for m in r.view if m in session.record]
            now = payload_bytes(compile_request(msgs, record=session.record, policy=off, tools=tools))
            if k % 4 == 0:  # no policy at all gives the same bytes as caching off (sampled: the large sessions are slow)
                assert payload_bytes(compile_request(msgs, record=session.record, tools=tools)) == now
            h.update(hashlib.sha256(now).digest())
        assert h.hexdigest() == expected["sha256"], name
        checked.append(name)
    assert len(checked) >= len(baseline) // 2, f"only {checked} still match their captured input"
