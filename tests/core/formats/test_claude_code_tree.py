"""Claude Code's tree (core.formats.claude_code, "Tree"): each request's view is the view as it stood after its line's
parent, over random trees of prompts, answers, rewinds and compactions, against a model that copies the view at
every line (the reader keeps one view per rewind or compaction and each line's number, not a copy per line)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.formats import claude_code

# A step: a prompt, an answer, or a compaction (a compact_boundary line and its summary line), each under the
# newest line (None) or under an earlier line (an index into the lines so far, taken modulo their number): a rewind.
STEPS = st.lists(
    st.tuples(
        st.sampled_from(["user", "user", "assistant", "assistant", "compact"]),
        st.one_of(st.none(), st.none(), st.none(), st.integers(0, 10_000)),
    ),
    min_size=1,
    max_size=30,
)


def _lines_and_model(steps: list[tuple[str, int | None]]) -> tuple[list[dict], list[tuple[str, ...]], list[str]]:
    """The file's lines, each request's view as the model has it, and the final view."""
    lines: list[dict] = []
    after: dict[str, list[str]] = {}  # each line's uuid -> a copy of the view right after it
    view: list[str] = []
    tip: str | None = None
    requests: list[tuple[str, ...]] = []

    def under(pick: int | None) -> str | None:
        nonlocal view
        if pick is None or not after:
            return tip
        parent = list(after)[pick % len(after)]
        if parent != tip:
            view = list(after[parent])  # a rewind: back to the view as it stood after the parent
        return parent

    for n, (kind, pick) in enumerate(steps):
        uuid = f"l{n}"
        stamp = {"sessionId": "s", "timestamp": f"2026-01-01T00:00:{n % 60:02d}.000Z"}
        if kind == "compact":
            parent = under(pick)
            lines.append(
                {
                    "type": "system",
                    "subtype": "compact_boundary",
                    "uuid": uuid,
                    "parentUuid": None,
                    "logicalParentUuid": parent,
                    "content": "Conversation compacted",
                    **stamp,
                }
            )
            after[uuid] = list(view)
            summary = f"{uuid}s"
            lines.append(
                {
                    "type": "user",
                    "uuid": summary,
                    "parentUuid": uuid,
                    "isCompactSummary": True,
                    "message": {"role": "user", "content": f"summary {n}"},
                    **stamp,
                }
            )
            view = [summary]
            after[summary], tip = list(view), summary
            continue
        parent = under(pick)
        if kind == "user":
            lines.append(
                {"type": "user", "uuid": uuid, "parentUuid": parent, "message": {"role": "user", "content": f"prompt {n}"}, **stamp}
            )
            view.append(uuid)
        else:
            requests.append(tuple(view))
            lines.append(
                {
                    "type": "assistant",
                    "uuid": uuid,
                    "parentUuid": parent,
                    **stamp,
                    "message": {
                        "id": f"m{uuid}",
                        "role": "assistant",
                        "model": "claude-x",
                        "content": [{"type": "text", "text": f"answer {n}"}],
                        "usage": {"input_tokens": 1, "output_tokens": 1},
                    },
                }
            )
            view.append(f"m{uuid}")
        after[uuid], tip = list(view), uuid
    return lines, requests, view


@settings(max_examples=150, deadline=None)
@given(STEPS)
def test_each_request_carries_the_view_as_it_stood_after_its_lines_parent(steps):
    lines, requests, final = _lines_and_model(steps)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        session = claude_code.read(path)
    assert [tuple(r.view) for r in session.trace] == requests
    assert session.view == final
