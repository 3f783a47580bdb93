"""A usage figure of the wrong type (a string, null, a negative, a float, one past 2^63) is read as unknown,
named in a warning with its line, never trusted as a count, and never stored as a number that overflows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldscope.core.formats import load_session
from foldscope.core.model.session import usage_figures

BAD = ["12", None, -5, 12.0, 2**63, True]
CLAUDE = "claude_code/extracted-dd381a75.jsonl"
CODEX = "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
PI = "pi/pi-mono_large-session.jsonl"


def _usage_of(entry: dict) -> tuple[dict, str] | None:
    """The usage object a line holds, and the key of its fresh input figure, per format."""
    message = entry.get("message")
    if isinstance(message, dict) and isinstance(message.get("usage"), dict):
        usage = message["usage"]
        return usage, "input_tokens" if "input_tokens" in usage else "input"
    payload = entry.get("payload")
    if isinstance(payload, dict) and payload.get("type") == "token_count" and isinstance(payload.get("info"), dict):
        last = payload["info"].get("last_token_usage")
        if isinstance(last, dict):
            return last, "input_tokens"
    return None


def _spoilt(corpus: Path, name: str, tmp_path: Path, value) -> tuple[Path, int, str]:
    """A copy of a real file with one usage figure, in the middle of the session, replaced by `value` (on every
    line of that response that repeats its usage, as Claude Code writes one response over several lines)."""
    lines = (corpus / name).read_text(encoding="utf-8").splitlines()
    places = [i for i, line in enumerate(lines) if line.strip() and _usage_of(json.loads(line))]
    at = places[len(places) // 2]
    original = dict(_usage_of(json.loads(lines[at]))[0])
    key = "output_tokens" if "output_tokens" in original else "input"  # a figure the reader does not group lines by
    last = at
    for i in places:
        entry = json.loads(lines[i])
        usage, _ = _usage_of(entry)
        if usage == original:
            usage[key] = value
            lines[i] = json.dumps(entry)
            last = max(last, i)
    out = tmp_path / Path(name).name
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out, last + 1, key


@pytest.mark.parametrize("name", [CLAUDE, CODEX, PI])
@pytest.mark.parametrize("value", BAD, ids=repr)
def test_a_usage_figure_of_the_wrong_type_is_read_as_unknown_and_named_with_its_line(corpus_dev, tmp_path, name, value):
    good = load_session(str(corpus_dev / name))
    path, line, key = _spoilt(corpus_dev, name, tmp_path, value)
    session = load_session(str(path))
    named = [w for w in session.warnings if f"line {line}:" in w and key in w and "wrong type" in w]
    assert len(named) == 1, session.warnings
    changed = [k for k, (a, b) in enumerate(zip(good.trace, session.trace)) if a.usage != b.usage]
    assert len(changed) == 1 and session.trace[changed[0]].usage is None  # unknown, not a trusted 0 or 12
    assert len(good.trace) == len(session.trace)


def test_usage_figures_reads_counts_and_lists_every_bad_figure():
    got, bad = usage_figures({"a": 3, "b": "4", "c": None, "d": -1, "e": 1.0, "f": 2**63, "g": 2**63 - 1}, "abcdefgh")
    assert got == {"a": 3, "g": 2**63 - 1, "h": 0}
    assert bad == ['b="4"', "c=null", "d=-1", "e=1.0", f"f={2**63}"]


def test_a_lionagi_manifest_figure_of_the_wrong_type_is_unknown_with_its_place(corpus_dev, tmp_path):
    # A Branch wrapped with its run manifest, as docs/session-format.md gives it; api_usage entries in the shape
    # core.formats.demo writes (the dev corpus's manifests carry no api_usage).
    branch = json.loads((corpus_dev / "lionagi" / "branch_v0.36.0_plain.synthetic.json").read_text(encoding="utf-8"))
    plain = load_session(str(corpus_dev / "lionagi" / "branch_v0.36.0_plain.synthetic.json"))
    entries = [
        {
            "request": k,
            "response_id": r.response_id,
            "input_tokens": 10,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
            "output_tokens": 5,
        }
        for k, r in enumerate(plain.trace)
    ]
    entries[0]["input_tokens"] = 2**70
    path = tmp_path / "wrapped.json"
    path.write_text(json.dumps({"branch": branch, "manifest": {"branch_id": branch.get("id"), "api_usage": entries}}), encoding="utf-8")
    session = load_session(str(path))
    assert session.trace[0].usage is None and session.trace[1].usage is not None
    assert any("api_usage[0]" in w and "input_tokens" in w for w in session.warnings)


def test_a_session_with_a_huge_figure_imports_into_the_library(corpus_dev, tmp_path):
    from foldscope.core.store.library import Library

    path, _, _ = _spoilt(corpus_dev, CODEX, tmp_path, 2**64)
    session = load_session(str(path))
    library = Library(str(tmp_path / "lib.db"))
    library.import_session(session)


def _usage_replaced(corpus: Path, name: str, tmp_path: Path, value) -> tuple[Path, int]:
    """A copy of a real file whose usage object, in the middle of the session, is `value` (no object at all)."""
    lines = (corpus / name).read_text(encoding="utf-8").splitlines()
    places = [i for i, line in enumerate(lines) if line.strip() and _usage_of(json.loads(line))]
    at = places[len(places) // 2]
    # Claude Code writes one response over several lines (one message id, usage growing as it streams): all of them.
    message = json.loads(lines[at]).get("message")
    same = message.get("id") if isinstance(message, dict) else None
    last = at
    for i in places:
        entry = json.loads(lines[i])
        if i != at and (same is None or (entry.get("message") or {}).get("id") != same):
            continue
        if isinstance(entry.get("message"), dict):
            entry["message"]["usage"] = value
        else:
            entry["payload"]["info"]["last_token_usage"] = value
        lines[i] = json.dumps(entry)
        last = max(last, i)
    out = tmp_path / Path(name).name
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out, last + 1


# A Claude Code file whose responses carry message ids (extracted-dd381a75 has none: its lines are grouped by
# their usage, so a line without one is a response of its own).
@pytest.mark.parametrize("name", ["claude_code/session-196820da.jsonl", CODEX, PI])
@pytest.mark.parametrize("value", ["lots", 42, [1, 2]], ids=repr)
def test_a_usage_that_is_no_object_is_read_as_unknown_and_named_with_its_line(corpus_dev, tmp_path, name, value):
    good = load_session(str(corpus_dev / name))
    path, line = _usage_replaced(corpus_dev, name, tmp_path, value)
    session = load_session(str(path))
    named = [w for w in session.warnings if f"line {line}:" in w and "usage is" in w and "not an object" in w]
    assert len(named) == 1, session.warnings
    changed = [k for k, (a, b) in enumerate(zip(good.trace, session.trace)) if a.usage != b.usage]
    assert len(changed) == 1 and session.trace[changed[0]].usage is None
