"""Each input that once crashed, hung or misled: one line naming the file and the problem, exit 2, nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.cli.output import terminal_safe
from foldscope.core.formats import detect_format, load_session
from foldscope.core.model.session import ReadError
from tests.core.reader_checks import write_lines


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"a": ' + "[" * 100_000 + "]" * 100_000 + '}\n{"b": 1}\n',
        '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
)
def test_json_nested_a_hundred_thousand_deep_is_one_line_not_a_recursion_error(tmp_path, capsys, text):
    path = tmp_path / "deep.json"
    path.write_text(text)
    assert main(["inspect", str(path)]) == 2
    line = _one_line(capsys)
    assert str(path) in line


def test_a_fifo_given_as_the_file_is_refused_at_once_not_waited_on(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-m", "foldscope.core.cli.main", "inspect", str(fifo)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.strip() == f"foldscope: {fifo}: is a FIFO, not a regular file: foldscope reads session files only"


@pytest.mark.parametrize("command", ["inspect", "count", "requests", "composition", "cache", "compactions", "view"])
def test_a_file_in_a_folder_one_cannot_enter_is_one_line(tmp_path, monkeypatch, capsys, command):
    # The tests run as root, for whom permissions do not apply: the refusal is what os.stat raises then.
    path = tmp_path / "locked" / "s.jsonl"
    real_stat = os.stat

    def stat(p, *args, **kwargs):
        if Path(p) == path:
            raise PermissionError(13, "Permission denied", str(p))
        return real_stat(p, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    assert main([command, str(path)]) == 2
    line = _one_line(capsys)
    # count opens the file without os.stat, so the stand-in refusal reaches it as the missing file it is
    assert line == f"foldscope: {path}: cannot read the file: " + (
        "No such file or directory" if command == "count" else "Permission denied"
    )


def test_a_file_name_that_is_not_utf8_reads_and_its_errors_print_escaped(tmp_path, corpus_dev, capsys):
    name = os.fsdecode(b"s\xff\xfe.jsonl")
    path = tmp_path / name
    path.write_bytes((corpus_dev / "claude_code" / "short.jsonl").read_bytes()[:-30])  # a warning names the file
    assert detect_format(path) == "claude_code"
    assert len(load_session(path).trace) > 0
    assert main(["inspect", str(path), "--db", str(tmp_path / "lib.db")]) == 0  # the library stores its name
    capsys.readouterr()
    bad = tmp_path / os.fsdecode(b"b\xff.jsonl")
    bad.write_bytes(b"")
    assert main(["inspect", str(bad)]) == 2
    line = _one_line(capsys)
    assert "b\\xff.jsonl" in line
    assert terminal_safe("a\x1b[31mred\x07") == "a\\x1b[31mred\\x07"


def test_a_usage_figure_past_2_63_is_named_and_not_trusted(tmp_path, capsys):
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            {"type": "user", "uuid": "u1", "sessionId": "s", "message": {"role": "user", "content": "hi"}},
            {
                "type": "assistant",
                "uuid": "a1",
                "parentUuid": "u1",
                "sessionId": "s",
                "message": {
                    "id": "m1",
                    "role": "assistant",
                    "model": "claude-x",
                    "content": [{"type": "text", "text": "yo"}],
                    "usage": {"input_tokens": 2**63, "cache_read_input_tokens": 0, "output_tokens": 3},
                },
            },
        ],
    )
    db = tmp_path / "lib.db"
    assert main(["inspect", str(path), "--db", str(db), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["peak_reported_input"] is None
    assert any("input_tokens=" in w and "wrong type" in w for w in result["warnings"])


def test_a_single_json_document_with_a_bad_byte_names_the_byte(tmp_path):
    path = tmp_path / "payload.json"
    data = b'{"model": "m", "messages": [{"role": "user", "content": "h\xffi"}]}'
    path.write_bytes(data)
    with pytest.raises(ReadError) as err:
        load_session(path, "raw_payload")
    bad = data.index(b"\xff")
    assert err.value.place == f"byte {bad}" and "UTF-8" in err.value.problem
    data = b'{"model": "m",\n "messages": [{"role": "user", "content": "hi"},]}'
    path.write_bytes(data)
    with pytest.raises(ReadError) as err:
        load_session(path, "raw_payload")
    column = data.index(b"]}") - data.index(b"\n")
    assert err.value.place == f"line 2 column {column}"


def test_wrong_typed_inspect_usage_is_named_in_a_warning(tmp_path):
    from tests.paths import corpus_glob

    found = corpus_glob("inspect/log_read_sample.json")
    if not found:
        pytest.skip("no Inspect log in the corpus")
    document = json.loads(found[0].read_bytes())
    model = next(e for e in document["samples"][0]["events"] if e["event"] == "model")
    model["output"]["usage"]["input_tokens"] = "66"
    path = tmp_path / "log.json"
    path.write_text(json.dumps(document))
    session = load_session(path)
    assert session.trace[0].usage is None
    assert any('input_tokens="66"' in w for w in session.warnings)


def test_a_run_stopped_while_counting_leaves_nothing_in_the_library(tmp_path, corpus_dev, monkeypatch, capsys):
    from foldscope.core.cli import basic
    from foldscope.core.store.library import Library

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl+C while a huge message is counted

    monkeypatch.setattr(basic, "summarise", stopped)
    db = tmp_path / "lib.db"
    assert main(["inspect", str(corpus_dev / "claude_code" / "short.jsonl"), "--db", str(db)]) == 130
    with Library(db) as library:
        assert library.db["sessions"].count == 0


@pytest.mark.parametrize("first_line_chars", [70_000, 3_000_000])
def test_a_session_whose_first_line_is_longer_than_the_sniff_window_is_read(tmp_path, corpus_dev, first_line_chars):
    """A Claude Code file opening on a long pasted prompt: the sniff window (64 KiB) held no whole line, so no reader
    claimed it and the file was refused as one broken JSON document ("line 2 column 1: not JSON: extra data")."""
    from foldscope.core.formats import SNIFF_BYTES

    lines = (corpus_dev / "claude_code" / "handmade_session_b.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["message"]["content"][0]["text"] = "word " * (first_line_chars // 5)
    path = tmp_path / "long-first.jsonl"
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    assert len(path.read_bytes().split(b"\n", 1)[0]) > SNIFF_BYTES
    original = load_session(str(corpus_dev / "claude_code" / "handmade_session_b.jsonl"))
    assert detect_format(path) == "claude_code"
    session = load_session(str(path))
    assert len(session.trace) == len(original.trace) and len(session.record) == len(original.record)
    assert session.record[0].text.startswith("word word")
