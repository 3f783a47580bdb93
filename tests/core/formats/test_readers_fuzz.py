"""Mutated real lines (truncated, retyped, fields dropped, junk and non-UTF-8 bytes) give a ReadError or a warning."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.formats import claude_code, codex, load_session, pi, raw_payload
from foldscope.core.model.session import ReadError, Session
from foldscope.core.store.library import Library
from tests.core.reader_checks import check_session

SOURCES = {
    "claude_code": ["claude_code/short.jsonl", "claude_code/tool_heavy.jsonl", "claude_code/extracted-dd381a75.jsonl"],
    "codex": ["codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"],
    "pi": ["pi/earendil-works-pi_prompt-cache-replay-session.jsonl", "pi/pi-mono_large-session.jsonl"],
}
READERS = {"claude_code": claude_code, "codex": codex, "pi": pi, "raw_payload": raw_payload}
LINES_PER_FILE = 40
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

JUNK_VALUES = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.just({}),
    st.booleans(),
    st.floats(allow_nan=False),
)


def _lines(corpus: Path, format: str) -> list[bytes]:
    out: list[bytes] = []
    for name in SOURCES[format]:
        with open(corpus / name, "rb") as handle:
            out.extend(line.rstrip(b"\n") for _, line in zip(range(LINES_PER_FILE), handle))
    return out


@st.composite
def _mutation(draw, lines: list[bytes]):
    """A copy of `lines` with one or two lines broken in one of the ways bad input comes."""
    lines = list(lines)
    for _ in range(draw(st.integers(1, 2))):
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["truncate", "retype", "drop", "junk", "not_utf8", "duplicate", "swap"]))
        if kind == "truncate":
            lines[i] = lines[i][: draw(st.integers(0, max(len(lines[i]) - 1, 0)))]
        elif kind in ("retype", "drop"):
            try:
                value = json.loads(lines[i])
            except ValueError:  # already broken by an earlier mutation
                continue
            node, key = _pick(draw, value)
            if node is None:
                value = draw(JUNK_VALUES)
            elif kind == "drop" and isinstance(node, dict):
                del node[key]
            else:
                node[key] = draw(JUNK_VALUES)
            lines[i] = json.dumps(value).encode()
        elif kind == "junk":
            at = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:at] + draw(st.binary(min_size=1, max_size=8)).replace(b"\n", b"") + lines[i][at:]
        elif kind == "not_utf8":
            at = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:at] + b"\xff\xfe\xc3" + lines[i][at:]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        else:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
    return lines


def _pick(draw, value):
    """A (container, key) somewhere inside a parsed line, or (None, None) for the line itself."""
    node, key = None, None
    current = value
    for _ in range(draw(st.integers(1, 4))):
        if isinstance(current, dict) and current:
            k = draw(st.sampled_from(sorted(current)))
        elif isinstance(current, list) and current:
            k = draw(st.integers(0, len(current) - 1))
        else:
            break
        node, key, current = current, k, current[k]
    return node, key


def _read_or_refuse(format: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mutated.jsonl"
        path.write_bytes(data)
        try:
            session = READERS[format].read(path)
        except ReadError as exc:
            assert exc.file == str(path) and exc.problem
            return
        assert isinstance(session, Session)
        session.check_view(session.view)
        for request in session.trace:
            session.check_view(request.view)


@pytest.mark.parametrize("format", sorted(SOURCES))
def test_mutated_real_lines_give_a_read_error_or_an_import_never_another_exception(corpus_dev, format):
    lines = _lines(corpus_dev, format)

    @SETTINGS
    @given(_mutation(lines))
    def run(mutated):
        _read_or_refuse(format, b"\n".join(mutated) + b"\n")

    run()


@SETTINGS
@given(st.data())
def test_mutated_request_payloads_give_a_read_error_or_an_import(data):
    payload = {
        "model": "m",
        "system": "s",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {"a": 1}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]},
        ],
    }
    node, key = _pick(data.draw, payload)
    if node is not None:
        node[key] = data.draw(JUNK_VALUES)
    _read_or_refuse("raw_payload", json.dumps(payload).encode())


def test_a_refused_import_leaves_the_library_unchanged(tmp_path, corpus_dev):
    broken = tmp_path / "broken.jsonl"
    lines = (corpus_dev / "claude_code" / "short.jsonl").read_bytes().splitlines()
    # damaged lines enough that the file is refused (one among good lines would be skipped and named)
    broken.write_bytes(b"\n".join(lines[:3] + [b'{"type": "user", oops'] * 3 + lines[3:]) + b"\n")
    with Library(tmp_path / "lib.db") as library:
        library.import_session(load_session(corpus_dev / "claude_code" / "short.jsonl"))
        before = (library.list_sessions(), library.db["messages"].count)
        with pytest.raises(ReadError):
            library.import_session(load_session(broken))
        assert (library.list_sessions(), library.db["messages"].count) == before


def test_a_truncated_last_line_imports_everything_before_it_with_one_warning(tmp_path, corpus_dev):
    source = corpus_dev / "claude_code" / "short.jsonl"
    data = source.read_bytes().rstrip(b"\n")
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(data[: len(data) - 40])
    session = claude_code.read(cut)
    check_session(session)
    assert len(session.warnings) == 1 and "truncated last line" in session.warnings[0]


def test_a_broken_first_line_of_json_lines_is_named(tmp_path):
    from foldscope.core.formats import load_session

    good = '{"type":"user","message":{"role":"user","content":"x"},"uuid":"%s","timestamp":"2025-01-01T00:00:01Z","sessionId":"s"}'
    path = tmp_path / "junk-first.jsonl"
    path.write_text("garbage here\n" + good % "b" + "\n" + good % "c" + "\n")
    with pytest.raises(ReadError) as err:
        load_session(path)
    assert str(err.value) == f"{path}: line 1: not JSON (the lines after it are)"


def test_a_broken_middle_line_is_named_with_its_column_and_skipped(tmp_path):
    from foldscope.core.formats import load_session

    good = '{"type":"user","message":{"role":"user","content":"x"},"uuid":"%s","timestamp":"2025-01-01T00:00:01Z","sessionId":"s"}'
    path = tmp_path / "junk-middle.jsonl"
    path.write_text(good % "a" + "\n{bad\n" + good % "c" + "\n")
    session = load_session(path)
    assert len(session.record) == 2
    assert f"{path}: line 2: not JSON at column 2: expecting property name enclosed in double quotes; skipped" in "\n".join(
        session.warnings
    )
