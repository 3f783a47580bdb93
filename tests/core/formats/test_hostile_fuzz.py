"""Fuzzed and hostile input through the command line: exit 0 or 2, at most three lines on stderr, no
traceback, no partial library rows, the source file unchanged, for every format foldscope reads."""

from __future__ import annotations

import hashlib
import io
import json
import random
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.model.session import ReadError
from foldscope.core.store.library import Library
from tests.paths import corpus_glob

SOURCES = {  # format -> files under the corpus (staged or dev: Inspect logs move from one to the other)
    "claude_code": ["dev/claude_code/short.jsonl", "dev/claude_code/tool_heavy.jsonl"],
    "codex": ["dev/codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"],
    "pi": ["dev/pi/earendil-works-pi_prompt-cache-replay-session.jsonl"],
    "lionagi": ["dev/lionagi/branch_v0.36.0_plain.synthetic.json"],
    "inspect": ["*/inspect/log_read_sample.json", "*/inspect/log_formats.eval"],
    "gemini_cli": ["*/gemini*/agent-sessions-jsonl_v040.jsonl", "*/gemini*/agent-sessions-large.json"],
    "cline": ["*/cline/1769064454592/ui_messages.json", "*/cline/1769064454592/api_conversation_history.json"],
    "qwen_code": ["*/qwen*/splitrail-qwen_code.jsonl", "*/qwen*/agent-sessions-019f0000-0000-7000-8000-000000000004.jsonl"],
    # The older layout's session file (its messages are not beside the fuzzed copy: a missing companion); the
    # database's locked, empty and not-a-database cases are in test_opencode.py.
    "opencode": ["*/opencode/*/session/*/ses_s_stage0_large.json"],
    "copilot_cli": ["*/copilot*/agent-sessions-small.jsonl", "*/copilot*/agent-sessions-aaaabbbb-*-events.jsonl"],
    # Markdown, mutated by lines as JSON lines are (truncated, flipped, deleted, swapped, junk bytes, duplicated).
    "aider": ["*/aider/metadata-aider.aider.chat.history.md", "*/aider/rfp_response_platform.aider.chat.history.md"],
}
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
# Numbers no store or clock holds among them (issue 42: 2^63, 10^30 and -2^63-1 in every numeric field).
HUGE = st.sampled_from([2**63, 10**30, -(2**63) - 1])
JUNK = st.one_of(
    st.none(),
    st.integers(-2, 2**64),
    HUGE,
    st.text(max_size=4),
    st.just([]),
    st.just({}),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
)


def _source(pattern: str) -> Path:
    found = corpus_glob(pattern.split("/", 1)[1])  # dev/ or staged/, whichever holds it; never eval/
    if not found:
        pytest.skip(f"no corpus file {pattern}")
    return found[0]


def _retype(value, rng: random.Random, junk):
    """Set one node somewhere inside a parsed value to a junk value."""
    node, key = None, None
    current = value
    for _ in range(rng.randint(1, 6)):
        if isinstance(current, dict) and current:
            k = rng.choice(sorted(current))
        elif isinstance(current, list) and current:
            k = rng.randrange(len(current))
        else:
            break
        node, key, current = current, k, current[k]
    if node is None:
        return junk
    node[key] = junk
    return value


def _mutate_lines(data: bytes, rng: random.Random, junk) -> bytes:
    lines = data.splitlines()[:60]
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines))
        kind = rng.choice(["truncate", "flip", "delete", "swap", "junk", "retype", "duplicate"])
        if kind == "truncate":
            lines = lines[:i] + [lines[i][: rng.randrange(len(lines[i]) + 1)]]
        elif kind == "flip" and lines[i]:
            at = rng.randrange(len(lines[i]))
            lines[i] = lines[i][:at] + bytes([lines[i][at] ^ (1 << rng.randrange(8))]) + lines[i][at + 1 :]
        elif kind == "delete" and len(lines) > 1:
            del lines[i]
        elif kind == "swap":
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "junk":
            lines.insert(i, bytes(rng.randrange(256) for _ in range(rng.randint(1, 12))).replace(b"\n", b""))
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        else:
            try:
                lines[i] = json.dumps(_retype(json.loads(lines[i]), rng, junk)).encode()
            except ValueError:
                pass
    return b"\n".join(lines) + b"\n"


def _mutate_document(data: bytes, rng: random.Random, junk) -> bytes:
    kind = rng.choice(["truncate", "flip", "retype", "retype"])
    if kind == "truncate":
        return data[: rng.randrange(len(data))]
    if kind == "flip":
        at = rng.randrange(len(data))
        return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]
    return json.dumps(_retype(json.loads(data), rng, junk)).encode()


def _mutate_archive(data: bytes, rng: random.Random, junk) -> bytes:
    """The .eval archive mutated as a zip: its own bytes cut or flipped, a member's compressed bytes flipped, or a
    member retyped, truncated, flipped, dropped, duplicated, inflated or renamed out of the archive (`../`)."""
    kind = rng.choice(["cut", "flip", "deflate", "member", "member", "drop", "duplicate", "inflate", "escape"])
    if kind == "cut":
        return data[: rng.randrange(len(data))]
    if kind == "flip":
        at = rng.randrange(len(data))
        return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        members = [(i.filename, archive.read(i.filename)) for i in infos]
    if kind == "deflate":  # the directory stays whole; one member's compressed stream does not inflate
        info = rng.choice([i for i in infos if i.compress_size > 8] or infos)
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
        flipped = bytearray(data)
        for at in range(start + 2, start + min(info.compress_size, 24)):
            flipped[at] ^= 0x5A
        return bytes(flipped)
    i = rng.randrange(len(members))
    name, body = members[i]
    if kind == "member":
        members[i] = (name, _mutate_document(body, rng, junk))
    elif kind == "drop":
        del members[i]
    elif kind == "duplicate":
        members.insert(i, (name, body))
    elif kind == "inflate":  # a member many times its size, still under the reader's limit
        members[i] = (name, body[:-1] + b" " * (1 << 20) + body[-1:] if body else body)
    else:
        members[i] = ("../" + name, body)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for n, b in members:
            archive.writestr(n, b)
    return out.getvalue()


def _check(path: Path, db: Path, capsys) -> None:
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    out = path.with_name("out.json")
    code = main(["export", str(path), "-o", str(out)])
    err = capsys.readouterr().err
    assert code in (0, 2), err
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 3, err
    with Library(db) as library:
        rows = (library.db["sessions"].count, library.db["messages"].count)
        try:
            session = load_session(path)
        except ReadError:
            assert code == 2
            session = None
        if session is not None:
            try:
                library.import_session(session)
            except ReadError:
                pass
        after = (library.db["sessions"].count, library.db["messages"].count)
        assert after == rows or (after[0] == rows[0] + 1 and after[1] - rows[1] == len(session.record))
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("format", sorted(SOURCES))
def test_fuzzed_files_exit_0_or_2_with_a_short_message_and_leave_no_partial_import(format, tmp_path, capsys):
    sources = [_source(p) for p in SOURCES[format]]
    assert sources, format

    @SETTINGS
    @given(st.randoms(use_true_random=False), JUNK, st.sampled_from(sources))
    def run(rng, junk, source):
        data = source.read_bytes()
        if source.suffix == ".eval":
            mutated = _mutate_archive(data, rng, junk)
        elif source.suffix == ".json":
            mutated = _mutate_document(data, rng, junk)
        else:
            mutated = _mutate_lines(data, rng, junk)
        path = tmp_path / f"fuzzed{source.suffix}"
        path.write_bytes(mutated)
        _check(path, tmp_path / "library.db", capsys)

    run()


def test_a_cline_task_whose_companion_file_is_fuzzed_exits_0_or_2_in_one_line_and_writes_nothing(tmp_path, capsys):
    # The file opened is whole; the other file of its task folder, read from beside it, is the hostile one.
    api, ui = (_source(f"*/cline/1769064454592/{name}") for name in ("api_conversation_history.json", "ui_messages.json"))
    task = tmp_path / "task"
    task.mkdir()

    @SETTINGS
    @given(st.randoms(use_true_random=False), JUNK, st.booleans())
    def run(rng, junk, open_api):
        opened, companion = (api, ui) if open_api else (ui, api)
        (task / opened.name).write_bytes(opened.read_bytes())
        (task / companion.name).write_bytes(_mutate_document(companion.read_bytes(), rng, junk))
        _check(task / opened.name, tmp_path / "library.db", capsys)

    run()


def test_a_cline_task_whose_companion_is_missing_opens_and_one_whose_companion_is_broken_is_refused_in_one_line(tmp_path, capsys):
    api = _source("*/cline/1769064454592/api_conversation_history.json")
    task = tmp_path / "task"
    task.mkdir()
    (task / api.name).write_bytes(api.read_bytes())
    assert main(["inspect", str(task / api.name)]) == 0
    assert "ui_messages.json is missing" in capsys.readouterr().out
    (task / "ui_messages.json").write_bytes(b'[{"ts": 1, "type": "say", "say": "api_req_st')
    assert main(["export", str(task / api.name), "-o", str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "ui_messages.json" in err and "not JSON" in err, err
    assert not (tmp_path / "out.json").exists()


def test_a_copilot_session_whose_opentelemetry_export_is_fuzzed_exits_0_or_2_in_one_line_and_writes_nothing(tmp_path, capsys):
    # The events file is whole (the test's session in Copilot CLI's shape); the export beside it is the hostile one.
    from tests.core.formats.test_copilot_cli import SID, _session_events, _spans

    folder = tmp_path / ".copilot"
    events = folder / "session-state" / SID / "events.jsonl"
    events.parent.mkdir(parents=True)
    events.write_text("".join(json.dumps(e) + "\n" for e in _session_events()))
    (folder / "otel").mkdir()
    spans = "".join(json.dumps(s) + "\n" for s in _spans()).encode()

    @SETTINGS
    @given(st.randoms(use_true_random=False), JUNK)
    def run(rng, junk):
        (folder / "otel" / "spans.jsonl").write_bytes(_mutate_lines(spans, rng, junk))
        _check(events, tmp_path / "library.db", capsys)

    run()
