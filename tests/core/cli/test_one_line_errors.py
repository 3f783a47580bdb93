"""A refused command line is one line on stderr, as every other error; a known binary file is named for what it is."""

from __future__ import annotations

import pytest

from foldscope.core.cli.main import main


@pytest.mark.parametrize(
    "argv, words",
    [
        (["requests"], "required: FILE"),
        (["requests", "x.jsonl", "--ceiling"], "--ceiling: expected one argument"),
        (["replay", "x.jsonl", "--strategy", "nope"], "'nope' is not one of"),
        (["library", "remove"], "required: ID"),
        (["fold", "x.jsonl", "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["nope-not-a-command", "--json"], "invalid choice: 'nope-not-a-command'"),
    ],
)
def test_an_argument_error_is_one_line_naming_the_command_and_the_problem(argv, words, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert err.count("\n") == 1 and err.startswith("foldscope"), err
    assert words in err and "usage:" not in err


@pytest.mark.parametrize(
    "argv, line",
    [
        (["inspect", "x.jsonl", "--model", "m"], "foldscope inspect: unrecognized arguments: --model m (foldscope inspect --help)"),
        (["cache", "x.jsonl", "--caching"], "foldscope cache: unrecognized arguments: --caching (foldscope cache --help)"),
        (["library", "list", "--bogus"], "foldscope library list: unrecognized arguments: --bogus (foldscope library list --help)"),
        (["--bogus"], "foldscope: unrecognized arguments: --bogus (foldscope --help)"),
    ],
)
def test_a_flag_a_command_does_not_take_is_refused_pointing_at_that_commands_help(argv, line, capsys):
    """`inspect --model` (inspect takes no model) pointed at `foldscope --help`, which lists commands, not their flags."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2 and capsys.readouterr().err == line + "\n"


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4


@pytest.mark.parametrize("command", ["inspect", "requests", "view", "report", "cache"])
def test_a_png_given_as_file_is_named_a_png_image_not_a_session_file(tmp_path, capsys, command):
    path = tmp_path / "shot.png"
    path.write_bytes(PNG)
    extra = ["-o", str(tmp_path / "r.html")] if command == "report" else []
    assert main([command, str(path), *extra]) == 2
    err = capsys.readouterr().err
    assert err == f"foldscope: {path}: a PNG image, not a session file\n"


@pytest.mark.parametrize(
    "head, name",
    [
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "a PDF document"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "a JPEG image"),
        (b"SQLite format 3\x00" + bytes(100), "an SQLite database"),
        (b"\x1f\x8b\x08\x00" + bytes(20), "a gzip"),
    ],
)
def test_other_known_binaries_are_named_too(tmp_path, capsys, head, name):
    path = tmp_path / "f.bin"
    path.write_bytes(head + bytes(range(256)))
    assert main(["inspect", str(path)]) == 2
    assert name in capsys.readouterr().err


def test_text_that_begins_like_a_short_signature_is_not_called_a_binary(tmp_path, capsys):
    path = tmp_path / "notes.txt"
    path.write_text("BM is where the notes begin\nand go on\n", encoding="utf-8")
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert "not a session file foldscope can read" in err and "BMP" not in err


def test_count_names_a_png_rather_than_a_byte_offset(tmp_path, capsys):
    path = tmp_path / "shot.png"
    path.write_bytes(PNG)
    assert main(["count", str(path)]) == 2
    assert capsys.readouterr().err == f"foldscope: {path}: a PNG image, not a text file\n"


def test_count_names_a_folder_as_the_other_commands_do(tmp_path, capsys):
    """New user 27: `count FOLDER` said "cannot read the file: Is a directory", the OS's words."""
    assert main(["count", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"foldscope: {tmp_path}: is a folder, not a text file\n"


def test_the_status_line_s_own_fast_parser_refuses_in_one_line_too(capsys):
    from foldscope.core.cli import statusline

    with pytest.raises(SystemExit) as stop:
        statusline.main(["--lines", "3"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and "usage:" not in err and "--lines" in err


def test_a_folder_given_bare_to_a_command_that_reads_one_with_in_says_how_to_name_it(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["sessions", str(tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1
    assert f"(a folder is named with --in: --in {tmp_path})" in err
    with pytest.raises(SystemExit):
        main(["sessions", str(tmp_path / "not-there")])  # not a folder: no such hint
    assert "--in" not in capsys.readouterr().err
