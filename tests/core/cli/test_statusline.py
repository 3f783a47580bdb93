"""`foldscope statusline` and `foldscope follow FILE --line` (issue 46): the figures are `requests`' and `cache`'s on the
same file at the same point, a run reads only what the file gained, a changed file is read afresh, and nothing
ever fails the user's bar."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from foldscope.core.cli import main as cli
from foldscope.core.cli import statusline
from foldscope.core.forensics.cause_prices import READ_INSTEAD

DEV = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus" / "dev" / "claude_code"
SESSION = DEV / "session-196820da.jsonl"  # 47 requests, no compaction, rewrites and provider misses
needs_dev = pytest.mark.skipif(not SESSION.exists(), reason="the dev corpus (../shared/corpus/dev) is not here")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FOLDSCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FOLDSCOPE_PROFILE", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FOLDSCOPE_STATUSLINE_IDLE", "0")  # no warm reader outlives a test unless it asks for one


def stdin_object(transcript: Path | str, **more) -> dict:
    """What Claude Code sends a status line command, with the fields its documentation lists."""
    return {
        "hook_event_name": "Status",
        "session_id": "196820da-0000-4000-8000-000000000000",
        "transcript_path": str(transcript),
        "cwd": "/home/user/project",
        "model": {"id": "claude-sonnet-4-5-20250929", "display_name": "Sonnet 4.5"},
        "workspace": {"current_dir": "/home/user/project", "project_dir": "/home/user/project"},
        "version": "2.1.6",
        "output_style": {"name": "default"},
        "cost": {
            "total_cost_usd": 1.23,
            "total_duration_ms": 456000,
            "total_api_duration_ms": 120000,
            "total_lines_added": 12,
            "total_lines_removed": 3,
        },
        "context_window": {
            "context_window_size": 200000,
            "used_percentage": 64,
            "remaining_percentage": 36,
            "current_usage": {
                "input_tokens": 4,
                "output_tokens": 310,
                "cache_creation_input_tokens": 1805,
                "cache_read_input_tokens": 126159,
            },
        },
        "exceeds_200k_tokens": False,
        **more,
    }


def run_hook(monkeypatch, capsys, stdin: str, *flags: str) -> str:
    """The command as Claude Code runs it: the object on stdin; returns what it printed (it must exit 0)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    assert statusline.main(list(flags)) == 0
    return capsys.readouterr().out


def figures(path: Path, capsys, *flags: str) -> dict:
    assert statusline.main(["--file", str(path), "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def cli_json(capsys, *argv: str) -> dict:
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def assert_same_as_requests_and_cache(path: Path, shown: dict, line: str, capsys) -> None:
    requests = cli_json(capsys, "requests", str(path))
    cache = cli_json(capsys, "cache", str(path))
    assert shown["requests"] == len(requests["requests"])
    assert shown["next"]["size_name"] == "predicted input"
    assert shown["next"]["size"] == requests["next_predicted"]
    assert f"next {requests['next_predicted']:,} " in line
    last = [r for r in cache["requests"] if r["reported"] is not None][-1]
    assert (shown["cache"]["index"], shown["cache"]["read"], shown["cache"]["write"]) == (
        last["index"],
        last["reported"]["cache_read"],
        last["reported"]["cache_write"],
    )
    assert shown["cache"]["causes"] == last["causes"]
    assert f"cache read {last['reported']['cache_read']:,} write {last['reported']['cache_write']:,} " in line
    by = cache["totals"]["by_cause"]
    assert shown["cost"]["bill_usd"] == cache["totals"]["bill_usd"]
    assert shown["cost"]["waste_usd"] == pytest.approx(sum(by[c]["waste_usd"] for c in READ_INSTEAD), abs=1e-8)
    assert f"${cache['totals']['bill_usd']:,.2f}" in line


@needs_dev
def test_a_growing_dev_session_shows_the_figures_requests_and_cache_give_at_each_point(tmp_path, monkeypatch, capsys):
    lines = SESSION.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "live.jsonl"
    copy.write_bytes(b"")
    done = 0
    seen = []
    for cut in (len(lines) * 2 // 5, len(lines) * 7 // 10, len(lines)):
        with open(copy, "ab") as handle:
            handle.write(b"".join(lines[done:cut]))
        added = sum(len(x) for x in lines[done:cut])
        done = cut
        line = run_hook(monkeypatch, capsys, json.dumps(stdin_object(copy)), "--no-color")
        shown = figures(copy, capsys)  # the same point: kept, nothing read again
        assert shown["_run"] == {"how": "kept", "bytes_read": 0}
        seen.append(shown)
        assert len(line.splitlines()) == 1 and "\x1b" not in line
        assert_same_as_requests_and_cache(copy, shown, line, capsys)
        if len(seen) > 1:  # the run before read the file so far: this one read only what it gained
            state = json.loads(next((tmp_path / "cache" / "statusline").glob("*.json")).read_text())
            assert state["snapshot"]["read_to"] == copy.stat().st_size
            assert added > 0
    assert [s["requests"] for s in seen] == sorted(s["requests"] for s in seen) and seen[0]["requests"] < seen[-1]["requests"]


@needs_dev
def test_a_second_run_reads_only_the_bytes_the_file_gained(tmp_path, capsys):
    lines = SESSION.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "live.jsonl"
    half = len(lines) // 2
    copy.write_bytes(b"".join(lines[:half]))
    first = figures(copy, capsys)
    assert first["_run"] == {"how": "read", "bytes_read": copy.stat().st_size}
    new = b"".join(lines[half : half + 3])
    with open(copy, "ab") as handle:
        handle.write(new)
    second = figures(copy, capsys)
    assert second["_run"] == {"how": "grown", "bytes_read": len(new)}
    # a line still being written is not read until its newline comes
    with open(copy, "ab") as handle:
        handle.write(lines[half + 3][:40])
    third = figures(copy, capsys)
    assert third["_run"] == {"how": "grown", "bytes_read": 0}
    with open(copy, "ab") as handle:
        handle.write(lines[half + 3][40:])
    assert figures(copy, capsys)["_run"] == {"how": "grown", "bytes_read": len(lines[half + 3])}
    assert figures(copy, capsys)["_run"] == {"how": "kept", "bytes_read": 0}


class CountingEncoding:
    """Stands in for the tokenizer (core.request.tokens.encoding returns it): counts the characters tokenised."""

    def __init__(self) -> None:
        from foldscope.core.request import tokens

        self.real = tokens.local_encoding()
        self.chars = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.chars += len(text)
        return self.real.encode_ordinary(text)

    def encode_ordinary_batch(self, texts: list[str], **kw) -> list[list[int]]:
        self.chars += sum(len(t) for t in texts)
        return self.real.encode_ordinary_batch(texts, **kw)

    def count_ordinary_batch(self, texts: list[str]) -> list[int]:
        self.chars += sum(len(t) for t in texts)
        return [len(ids) for ids in self.real.encode_ordinary_batch(texts)]

    def __getattr__(self, name: str):
        return getattr(self.real, name)


@needs_dev
def test_a_grown_run_tokenises_only_what_the_file_gained(tmp_path, monkeypatch, capsys):
    from foldscope.core.request import tokens

    # Counted as with tiktoken, by passages: a long text that grew is tokenised only where it is new. quicktok counts
    # the whole text again (about 10 ns a character, less than cutting it into passages costs; docs/performance.md).
    monkeypatch.setattr(tokens, "BACKEND", tokens.SLOW)

    lines = SESSION.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "live.jsonl"
    copy.write_bytes(b"".join(lines[:-2]))
    fresh = CountingEncoding()
    monkeypatch.setattr(tokens, "_helper", fresh)
    figures(copy, capsys)
    with open(copy, "ab") as handle:
        handle.write(b"".join(lines[-2:]))
    grown = CountingEncoding()
    monkeypatch.setattr(tokens, "_helper", grown)
    assert figures(copy, capsys)["_run"]["how"] == "grown"
    gained = sum(len(x) for x in lines[-2:])
    assert fresh.chars > 100_000 and grown.chars < gained, (fresh.chars, grown.chars, gained)


@needs_dev
def test_a_shrunk_or_replaced_or_rewritten_file_is_read_afresh(tmp_path, capsys):
    lines = SESSION.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "live.jsonl"
    copy.write_bytes(b"".join(lines[:40]))
    assert figures(copy, capsys)["_run"]["how"] == "read"
    copy.write_bytes(b"".join(lines[:20]))  # shrank
    shrunk = figures(copy, capsys)
    assert shrunk["_run"] == {"how": "read", "bytes_read": copy.stat().st_size}
    assert shrunk == {**figures(copy, capsys), "_run": shrunk["_run"]}
    other = tmp_path / "other.jsonl"  # replaced by another file under the same name (a new inode), longer
    other.write_bytes(b"".join(lines[:60]))
    os.replace(other, copy)
    assert figures(copy, capsys)["_run"]["how"] == "read"
    data = bytearray(copy.read_bytes())  # rewritten in place before where the last run stopped, then grown
    data[10:14] = b"XXXX" if data[10:14] != b"XXXX" else b"YYYY"
    copy.write_bytes(bytes(data) + b"".join(lines[60:61]))
    out = statusline.main(["--file", str(copy), "--json"])
    text = capsys.readouterr().out
    assert out == 0 and (text.startswith("foldscope: ") or json.loads(text)["_run"]["how"] == "read")


def test_a_missing_transcript_prints_one_plain_line_and_exits_0(tmp_path, monkeypatch, capsys):
    out = run_hook(monkeypatch, capsys, json.dumps(stdin_object(tmp_path / "gone.jsonl")))
    assert out.startswith("foldscope: ") and out.count("\n") == 1 and "Traceback" not in out
    assert "gone.jsonl" in out


def test_a_damaged_transcript_or_input_prints_one_plain_line_and_exits_0(tmp_path, monkeypatch, capsys):
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\nnot json at all\n')
    for stdin in (json.dumps(stdin_object(damaged)), "not json", "", json.dumps({"session_id": "x"}), json.dumps(stdin_object(tmp_path))):
        out = run_hook(monkeypatch, capsys, stdin)
        assert out.startswith("foldscope: ") and out.count("\n") == 1 and "Traceback" not in out, (stdin, out)


def test_input_that_is_not_json_is_named_with_its_place_and_what_the_line_takes(monkeypatch, capsys):
    """New user 27: `echo garbage | foldscope statusline` said only "Expecting value: line 1 column 1 (char 0)"."""
    out = run_hook(monkeypatch, capsys, "garbage")
    assert out == (
        'foldscope: the status line\'s input is not JSON (line 1, column 1: expecting value); it takes {"transcript_path": FILE} on stdin\n'
    )


def test_a_transcript_path_holding_a_nul_is_named_as_the_input_s_not_the_os_s(monkeypatch, capsys):
    """The review: `{"transcript_path": "\\u0000"}` said only "embedded null byte", naming neither the input nor the key."""
    out = run_hook(monkeypatch, capsys, json.dumps({"transcript_path": "a\0b"}))
    assert out == "foldscope: the status line's input: transcript_path holds a NUL character, which no file name can\n"


def test_control_characters_in_an_error_never_reach_the_terminal(tmp_path, monkeypatch, capsys):
    named = tmp_path / "a\x1b]52;c;x\x07.jsonl"
    named.write_text("not a session\n")  # read, and refused: the error names the file
    out = run_hook(monkeypatch, capsys, json.dumps(stdin_object(named)))
    assert "\x1b" not in out and "\x07" not in out and out.startswith("foldscope: ") and "not a session file" in out


def test_before_the_first_exchange_writes_the_transcript_the_line_says_it_waits_not_that_the_file_is_missing(tmp_path, monkeypatch, capsys):
    """review11: Claude Code runs the status line with the transcript's path before its first exchange writes the
    file (at start, after /clear), and the bar said "foldscope: ...: cannot read the file: No such file or
    directory", read as broken; an empty file said "the file is empty". Both now say the line waits; --file at a
    terminal still names a missing file."""
    for path in (tmp_path / "new-session.jsonl", tmp_path / "empty.jsonl"):
        if path.name == "empty.jsonl":
            path.write_text("")
        out = run_hook(monkeypatch, capsys, json.dumps(stdin_object(path)))
        assert out == f"foldscope: waiting for the session's first message ({path.name} not written yet)\n", out
    assert statusline.main(["--file", str(tmp_path / "typo.jsonl"), "--no-color"]) == 0
    assert "No such file" in capsys.readouterr().out


@needs_dev
def test_colour_only_when_wanted(monkeypatch, capsys):
    hooked = run_hook(monkeypatch, capsys, json.dumps(stdin_object(SESSION)))
    assert "\x1b[" in hooked  # Claude Code's bar shows ANSI colour
    assert "\x1b" not in run_hook(monkeypatch, capsys, json.dumps(stdin_object(SESSION)), "--no-color")
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b" not in run_hook(monkeypatch, capsys, json.dumps(stdin_object(SESSION)))
    monkeypatch.delenv("NO_COLOR")
    two = run_hook(monkeypatch, capsys, json.dumps(stdin_object(SESSION)), "--no-color", "--lines", "2").splitlines()
    assert len(two) == 2 and "compaction point: Claude Code's auto-compact point" in two[1]
    assert two[1].endswith("; Claude Code says: window 200,000, cost $1.23")  # its own figures, beside ours
    bare = {"transcript_path": str(SESSION)}  # an older Claude Code: no window, no cost
    assert "Claude Code says" not in run_hook(monkeypatch, capsys, json.dumps(bare), "--lines", "2")


@needs_dev
def test_the_second_line_names_the_next_figure_and_gives_the_estimate_apart(monkeypatch, capsys):
    """Polish 6: it read "predicted input, estimate 44,432" under "next 44,496": one figure named twice, it seemed."""
    shown = figures(SESSION, capsys)["next"]
    assert shown["size_name"] == "predicted input" and shown["size"] != shown["estimate"]
    two = run_hook(monkeypatch, capsys, json.dumps(stdin_object(SESSION)), "--no-color", "--lines", "2").splitlines()
    assert f"next {shown['size']:,} of " in two[0]
    assert f"; next {shown['size']:,} is the predicted input (the estimate, count x scale: {shown['estimate']:,});" in two[1]


@needs_dev
def test_the_line_says_the_cause_of_a_write_that_was_not_an_append_and_when_the_cache_expires(capsys):
    shown = figures(SESSION, capsys)
    cache = shown["cache"]
    assert cache["cause"] == "provider" and cache["causes"]["provider"] > 0  # the session's last request
    touched = cache["touched"]
    at = touched["at"]
    line = statusline.render(shown, at + 60, colour=False)
    assert "provider miss · expires in 4:00 (5m)" in line
    assert "expired 1:00 ago" in statusline.render(shown, at + 360, colour=False)
    rewrite = {**cache, "cause": "rewrite", "rewrite": {"why": "a message was edited, moved or removed", "message": 12}}
    assert statusline.cause_words(rewrite) == "rewrite: a message was edited, moved or removed at message #12"
    assert statusline.cause_words({**cache, "cause": "expired", "gap_s": 725.0}) == "expired: 12:05 gap"


@needs_dev
def test_a_profile_named_by_option_or_environment_warns_when_the_next_request_crosses_its_line(tmp_path, monkeypatch, capsys):
    profile = tmp_path / "tight.yaml"
    profile.write_text("max_input_tokens: 150000\ncontext_fold_at: 0.8\n")
    plain = figures(SESSION, capsys)
    assert plain["next"]["reached"] == [] and "⚠" not in statusline.render(plain, 0)
    by_flag = figures(SESSION, capsys, "--profile", str(profile))
    assert by_flag["next"]["reached"] == ["line"]  # estimate 144,737 >= 120,000, under 150,000
    assert "⚠ next request at or past the line 120,000" in statusline.render(by_flag, 0)
    monkeypatch.setenv("FOLDSCOPE_PROFILE", str(profile))
    assert figures(SESSION, capsys)["next"]["reached"] == ["line"]


@needs_dev
def test_follow_line_prints_the_status_line_as_the_file_grows(tmp_path, capsys):
    lines = SESSION.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "live.jsonl"
    copy.write_bytes(b"".join(lines))
    assert cli.main(["follow", str(copy), "--line", "--polls", "2", "--interval", "0", "--no-color"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1  # printed once: the file did not grow between the two looks
    shown = figures(copy, capsys)

    def timeless(text: str) -> str:  # the expiry counts down with the clock
        return re.sub(r" · expire[^·]*", "", text)

    assert timeless(out[0]) == timeless(statusline.render(shown, 0, colour=False))
    assert f"next {shown['next']['size']:,} " in out[0]


def test_install_prints_the_entry_and_writes_only_with_write_keeping_the_rest_and_a_backup(tmp_path, capsys):
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"model": "opus", "permissions": {"allow": ["Bash(ls)"]}}))
    assert statusline.main(["--install", "--settings", str(settings)]) == 0
    out = capsys.readouterr().out
    assert '"statusLine"' in out and json.loads(settings.read_text()) == {"model": "opus", "permissions": {"allow": ["Bash(ls)"]}}
    assert statusline.main(["--install", "--write", "--settings", str(settings)]) == 0
    capsys.readouterr()
    written = json.loads(settings.read_text())
    assert written["model"] == "opus" and written["permissions"] == {"allow": ["Bash(ls)"]}
    assert written["statusLine"]["type"] == "command" and written["statusLine"]["command"].endswith("statusline")
    backups = list(tmp_path.glob("settings.json.*.bak"))
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == {"model": "opus", "permissions": {"allow": ["Bash(ls)"]}}
    settings.write_text("{not json")
    assert statusline.main(["--install", "--write", "--settings", str(settings)]) == 0
    assert "left as it is" in capsys.readouterr().out and settings.read_text() == "{not json"


def test_install_names_this_foldscope_when_none_is_on_the_path(tmp_path, monkeypatch, capsys):
    """review8: run as .venv/bin/foldscope (the README's way without `make install`), --install wrote the command
    "foldscope statusline", which Claude Code cannot find: the entry now names this foldscope."""
    own = Path(sys.executable).with_name("foldscope")
    if not own.exists():
        pytest.skip("no foldscope script beside this interpreter")
    monkeypatch.setenv("PATH", str(tmp_path))  # no foldscope on it
    assert statusline.settings_entry()["statusLine"]["command"] == f"{own} statusline"
    assert statusline.main(["--install"]) == 0
    assert f'"command": "{own} statusline"' in capsys.readouterr().out


@pytest.mark.skipif(os.name != "posix", reason="links and modes as POSIX keeps them")
def test_install_writes_a_linked_settings_file_through_its_link_keeps_its_mode_and_backs_it_up_privately(tmp_path, capsys):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    real.write_text(json.dumps({"env": {"ANTHROPIC_API_KEY": "sk-secret"}}))
    real.chmod(0o600)
    settings = tmp_path / "settings.json"
    settings.symlink_to(real)  # a dotfiles manager's link
    assert statusline.main(["--install", "--write", "--settings", str(settings)]) == 0
    capsys.readouterr()
    assert settings.is_symlink() and settings.resolve() == real  # the link stays; its target got the entry
    assert json.loads(real.read_text())["statusLine"]["type"] == "command"
    assert (real.stat().st_mode & 0o777) == 0o600
    (backup,) = tmp_path.glob("settings.json.*.bak")
    assert (backup.stat().st_mode & 0o777) == 0o600  # the old settings (a key among them) readable by no one else
    assert json.loads(backup.read_text()) == {"env": {"ANTHROPIC_API_KEY": "sk-secret"}}


def test_install_refuses_a_settings_path_that_is_a_folder_and_writes_nothing(tmp_path, capsys):
    folder = tmp_path / "settings.json"
    folder.mkdir()
    assert statusline.main(["--install", "--write", "--settings", str(folder)]) == 0
    assert "not a regular file" in capsys.readouterr().out and list(tmp_path.iterdir()) == [folder]


@needs_dev
def test_an_unchanged_file_is_shown_without_importing_the_measure_or_qt(tmp_path, capsys):
    figures(SESSION, capsys)  # the state is kept
    code = (
        "import sys; from foldscope.app.main import main; rc = main(['statusline', '--file', sys.argv[1]]); "
        "print(sorted(m for m in sys.modules if m.startswith(('foldscope.core.request', 'PySide6', "
        "'foldscope.core.forensics', 'tiktoken'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(SESSION)],
        capture_output=True,
        text=True,
        env={**os.environ, "FOLDSCOPE_CACHE": str(tmp_path / "cache")},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    printed, imported = done.stdout.splitlines()
    assert printed.startswith("█") or "next " in printed
    assert imported == "[]"


def test_the_flags_read_without_the_parser_are_the_ones_the_parser_reads():
    from foldscope.core.cli.output import Parser

    parser = Parser(prog="foldscope statusline")
    statusline.add_statusline(parser)
    for argv in (
        [],
        ["--no-color"],
        ["--json", "--lines", "2"],
        ["--file", "a.jsonl", "--profile", "p.yaml", "--no-color"],
        ["--lines", "2", "--lines", "1"],
    ):
        plain = statusline.plain_flags(argv)
        assert plain is not None, argv
        assert vars(plain) == {k: v for k, v in vars(parser.parse_args(argv)).items() if k != "run"}, argv
    # anything else is the parser's: an abbreviation, `=`, a value it refuses, --install, --help, a missing value
    for argv in (["--no-col"], ["--lines=2"], ["--lines", "3"], ["--install"], ["--help"], ["--file"], ["--file", "-x"], ["a.jsonl"]):
        assert statusline.plain_flags(argv) is None, argv


@needs_dev
def test_the_client_imports_neither_argparse_nor_typing_nor_the_socket_module(tmp_path, capsys):
    figures(SESSION, capsys)  # the state is kept: the run below prints it
    code = (
        "import sys; from foldscope.app.main import main; rc = main(['statusline', '--no-color', '--file', sys.argv[1]]); "
        "print(sorted(m for m in ('argparse', 'gettext', 'typing', 'socket', 'selectors') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(SESSION)],
        capture_output=True,
        text=True,
        env={**os.environ, "FOLDSCOPE_CACHE": str(tmp_path / "cache")},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    printed, imported = done.stdout.splitlines()
    assert "next " in printed and imported == "[]"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG rule is applied on Linux; elsewhere platformdirs answers")
def test_the_state_folder_is_the_one_platformdirs_names_without_importing_it(tmp_path, monkeypatch):
    from foldscope.core.model.folders import cache_folder

    monkeypatch.delenv("FOLDSCOPE_CACHE")
    for xdg in (None, "", "relative/cache", str(tmp_path / "xdg"), str(tmp_path / "xdg") + "/"):
        for home in (None, "", "relative", str(tmp_path / "home"), "/"):
            for name, value in (("XDG_CACHE_HOME", xdg), ("HOME", home)):
                if value is None:
                    monkeypatch.delenv(name, raising=False)
                else:
                    monkeypatch.setenv(name, value)
            try:
                expected = cache_folder() / "statusline"
            except RuntimeError:  # platformdirs finds no home: the status line then asks it and says the same
                continue
            assert statusline._folder() == expected, (xdg, home)
    code = "import sys; from foldscope.core.cli import statusline; statusline._folder(); print('platformdirs' in sys.modules)"
    env = {k: v for k, v in os.environ.items() if k not in ("FOLDSCOPE_CACHE", "XDG_CACHE_HOME")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**env, "HOME": str(tmp_path)}, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "False", done.stderr


def test_follow_line_says_a_missing_file_once_and_keeps_looking(tmp_path, capsys):
    assert cli.main(["follow", str(tmp_path / "gone.jsonl"), "--line", "--polls", "3", "--interval", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("foldscope: ") and "gone.jsonl" in out[0]


def test_a_missing_file_is_said_as_every_command_says_it_not_as_pythons_errno(tmp_path, monkeypatch, capsys):
    """New user 27: `follow` and the status line said "[Errno 2] No such file or directory: '...'"."""
    gone = tmp_path / "gone.jsonl"
    said = f"foldscope: {gone}: cannot read the file: No such file or directory"
    assert cli.main(["follow", str(gone), "--line", "--polls", "1", "--interval", "0"]) == 0
    assert capsys.readouterr().out.splitlines() == [said]
    # the hook's transcript not there yet is Claude Code before its first exchange: said as waiting, naming the file
    waiting = "foldscope: waiting for the session's first message (gone.jsonl not written yet)"
    assert run_hook(monkeypatch, capsys, json.dumps(stdin_object(gone))).splitlines() == [waiting]


def test_a_request_that_wrote_nothing_says_so_once():
    shown = {
        "requests": 1,
        "next": {"size": 10, "size_name": "predicted input", "estimate": 10, "agent": [], "policy": [], "reached": []},
        "cache": {"read": 500, "write": 0, "cause": None, "causes": {}},
        "cost": {},
    }
    assert statusline.render(shown, 0) == "next 10 · cache read 500 no write · nothing cached"


@needs_dev
@pytest.mark.skipif(not hasattr(os, "fork"), reason="the reading child is forked (POSIX)")
def test_a_run_cancelled_while_reading_still_keeps_what_it_read(tmp_path, capsys):
    """Claude Code cancels a status line still running when the next update comes: the reading goes on in a child
    of its own session, so the next run starts from what it kept, not from scratch."""
    import time

    copy = tmp_path / "live.jsonl"
    copy.write_bytes(SESSION.read_bytes())
    cache = tmp_path / "cache"
    run = subprocess.Popen(
        [sys.executable, "-m", "foldscope.app.main", "statusline"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "FOLDSCOPE_CACHE": str(cache)},
    )
    assert run.stdin is not None
    run.stdin.write(json.dumps(stdin_object(copy)).encode())
    run.stdin.close()
    deadline = time.monotonic() + 60
    while not list((cache / "statusline").glob("*.lock")) and time.monotonic() < deadline:
        time.sleep(0.02)
    run.kill()  # cancelled while the child reads
    run.wait()
    state = None
    while time.monotonic() < deadline:
        found = list((cache / "statusline").glob("*.json"))
        if found:
            state = json.loads(found[0].read_text())
            break
        time.sleep(0.05)
    assert state is not None and state["snapshot"]["read_to"] == copy.stat().st_size
    assert figures(copy, capsys)["_run"] == {"how": "kept", "bytes_read": 0}


def reader_runs(gained: int) -> list[dict]:
    """How a warm reader's figures came after the file gained `gained` bytes: it read them when the run asked, or it had
    read them ahead (the run then found them kept, or asked while the reader finished)."""
    return [
        {"how": "grown", "bytes_read": gained, "served": True},
        {"how": "kept", "bytes_read": 0},
        {"how": "kept", "bytes_read": 0, "served": True},
    ]


def kept_state(cache: Path) -> dict:
    return json.loads(next((cache / "statusline").glob("*.json")).read_text())


def hook_in_a_process(transcript: Path, env: dict) -> dict:
    """One `foldscope statusline --json` run as Claude Code makes it, in a process of its own (exit 0 asserted)."""
    done = subprocess.run(
        [sys.executable, "-m", "foldscope.app.main", "statusline", "--json"],
        env=env,
        input=json.dumps(stdin_object(transcript)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@needs_dev
@pytest.mark.skipif(not hasattr(os, "fork"), reason="the warm reader is forked (POSIX)")
def test_a_warm_reader_answers_the_next_runs_with_the_same_figures_and_ends_when_idle(tmp_path, capsys):
    import time

    lines = SESSION.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "live.jsonl"
    copy.write_bytes(b"".join(lines[:-3]))
    cache = tmp_path / "cache"
    # Idle long enough that a loaded machine's slow start of the next hook never finds the reader gone (4 s did, once)
    env = {**os.environ, "FOLDSCOPE_CACHE": str(cache), "FOLDSCOPE_STATUSLINE_IDLE": "15"}

    def hook() -> dict:
        return hook_in_a_process(copy, env)

    assert hook()["_run"] == {"how": "read", "bytes_read": copy.stat().st_size}
    socket = cache / "statusline" / "reader.sock"
    assert socket.exists()
    for line in lines[-3:-1]:
        with open(copy, "ab") as handle:
            handle.write(line)
        shown = hook()
        # read by the reader (ahead of the run, or when it asked), and only what the file gained
        assert shown["_run"] in reader_runs(len(line)), shown["_run"]
        assert kept_state(cache)["snapshot"]["read_to"] == copy.stat().st_size
        assert shown["next"]["size"] == cli_json(capsys, "requests", str(copy))["next_predicted"]
    deadline = time.monotonic() + 90
    while socket.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not socket.exists()  # ended by itself once idle, its engine pickled for the next cold run
    with open(copy, "ab") as handle:
        handle.write(lines[-1])
    assert figures(copy, capsys)["_run"] == {"how": "grown", "bytes_read": len(lines[-1])}


def fresh_figures(path: Path) -> dict:
    """What a fresh engine (the whole file read and measured) gives, as a run prints it (JSON)."""
    from foldscope.core.readout.status import StatusEngine

    return json.loads(json.dumps(StatusEngine(str(path)).update()))


def without_run(shown: dict) -> dict:
    return {k: v for k, v in shown.items() if k not in ("_run", "agent_says")}


@needs_dev
@pytest.mark.skipif(not hasattr(os, "fork"), reason="the warm reader is forked (POSIX)")
def test_a_warm_reader_reads_a_new_line_before_a_run_asks_and_each_run_gets_the_file_as_it_stands(tmp_path, capsys):
    import time

    lines = SESSION.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "live.jsonl"
    copy.write_bytes(b"".join(lines[:-6]))
    cache = tmp_path / "cache"
    env = {**os.environ, "FOLDSCOPE_CACHE": str(cache), "FOLDSCOPE_STATUSLINE_IDLE": "15"}

    def hook() -> dict:
        return hook_in_a_process(copy, env)

    assert hook()["_run"]["how"] == "read"  # the reader stays warm
    with open(copy, "ab") as handle:
        handle.write(lines[-6])
    deadline = time.monotonic() + 30
    while kept_state(cache)["snapshot"]["read_to"] != copy.stat().st_size and time.monotonic() < deadline:
        time.sleep(0.05)
    assert kept_state(cache)["snapshot"]["read_to"] == copy.stat().st_size  # read with no run asking: the write woke it
    shown = hook()
    assert shown["_run"] == {"how": "kept", "bytes_read": 0} and without_run(shown) == fresh_figures(copy)
    for line in lines[-5:]:  # a run straight after each line, while the reader may still be reading it ahead
        with open(copy, "ab") as handle:
            handle.write(line)
        shown = hook()
        assert shown["_run"] in reader_runs(len(line)), shown["_run"]
        assert without_run(shown) == fresh_figures(copy)


def test_reading_ahead_waits_for_a_complete_line_and_keeps_the_figures_a_fresh_read_gives(tmp_path):
    from foldscope.core.cli import statusline_reader as reader
    from tests.core.live_sessions import append, assistant, rounds, user

    copy = tmp_path / "live.jsonl"
    append(copy, rounds(0, 40))
    folder = tmp_path / "cache" / "statusline"
    engines: dict = {}
    reader.update(str(copy), None, folder, engines)
    new = json.dumps(user(40, "question 40: " + "word " * 30)) + "\n"
    with open(copy, "a", encoding="utf-8") as handle:
        handle.write(new[:25])
    assert reader.read_ahead(folder, engines) == []  # a line still being written: nothing to read yet
    with open(copy, "a", encoding="utf-8") as handle:
        handle.write(new[25:])
    append(copy, [assistant(40, "answer 40: " + "reply " * 40, 11_000)])
    assert reader.read_ahead(folder, engines) == [str(copy)]
    assert reader.read_ahead(folder, engines) == []  # read to the end already
    kept = reader.kept(str(copy), None, folder)
    assert kept is not None and without_run(kept) == fresh_figures(copy)
    assert kept["requests"] == 41


def test_reading_ahead_rests_as_long_as_it_took_and_a_write_meanwhile_waits_for_the_rest_to_end():
    from foldscope.core.cli import statusline_reader as reader

    growth = reader.Growth()
    fd = growth.fd
    growth.close()  # with no inotify every wake is a look
    assert growth.timeout(600, 0.0) == reader.LOOK and not growth.due(0.0)
    growth.woken([])
    assert growth.due(10.0)
    growth.rested(10.0, 10.3)  # it read for 0.3 s: it rests 0.3 s
    assert not growth.due(10.4) and growth.timeout(600, 10.4) == reader.LOOK
    growth.woken([])
    assert not growth.due(10.59) and growth.timeout(600, 10.4) == pytest.approx(0.2)
    assert growth.due(10.61)
    growth.rested(11.0, 11.0)  # looked and found nothing: no rest
    growth.woken([])
    assert growth.due(11.0)
    if fd is not None:  # with inotify, the reader sleeps until a write or its idle time ends
        watching = reader.Growth()
        assert watching.timeout(600, 0.0) == 600 and not watching.due(0.0)
        watching.woken([])  # woken by a run, not a write
        assert not watching.due(0.0)
        watching.close()


def test_a_transcript_put_in_place_of_the_one_watched_is_watched_again(tmp_path):
    import select

    from foldscope.core.cli import statusline_reader as reader

    growth = reader.Growth()
    if growth.fd is None:
        pytest.skip("no inotify here: the reader looks at the files instead")
    try:
        watched = tmp_path / "live.jsonl"
        watched.write_text("{}\n")
        growth.follow([str(watched)])
        other = tmp_path / "other.jsonl"
        other.write_text("{}\n")
        os.replace(other, watched)
        growth.follow([str(watched)])
        growth.woken(growth.fds())  # what the replacing said is read and dropped
        growth.pending = False
        with open(watched, "a", encoding="utf-8") as handle:
            handle.write("{}\n")
        assert select.select(growth.fds(), [], [], 5)[0]  # the write to the file now in place woke it
    finally:
        growth.close()


def test_a_file_newly_watched_is_looked_at_once_since_a_line_written_before_its_watch_sends_no_event(tmp_path):
    from foldscope.core.cli import statusline_reader as reader

    growth = reader.Growth()
    if growth.fd is None:
        pytest.skip("no inotify here: the reader looks at the files every LOOK seconds instead")
    try:
        watched = tmp_path / "live.jsonl"
        watched.write_text("{}\n")  # written after the reader answered, before it watches: no event will come
        growth.follow([str(watched)])
        assert growth.due(0.0)  # looked at once, at the first turn of the loop
        growth.rested(0.0, 0.0)
        growth.follow([str(watched)])  # the same file, watched already: no look without a write
        assert not growth.due(1.0)
    finally:
        growth.close()


def test_the_tokenizer_is_built_on_another_thread_once_while_the_reading_goes_on(tmp_path, monkeypatch):
    import threading

    from foldscope.core.cli import statusline_reader as reader
    from foldscope.core.request import tokens
    from tests.core.live_sessions import append, assistant, rounds, user

    builds = []
    local = tokens.local_encoding

    def recorded():
        builds.append(threading.current_thread().name)
        return local()

    monkeypatch.setattr(tokens, "local_encoding", recorded)
    monkeypatch.setattr(reader, "_building", None)  # as in a process that has built none
    copy = tmp_path / "live.jsonl"
    append(copy, rounds(0, 20))
    folder = tmp_path / "cache" / "statusline"
    first = reader.update(str(copy), None, folder)
    assert builds == ["tokenizer build"] and first["_run"]["how"] == "read"
    reader._building.join(timeout=60)
    append(copy, [user(20, "question 20"), assistant(20, "answer 20", 7_000)])
    assert reader.update(str(copy), None, folder)["_run"]["how"] == "grown"
    assert builds == ["tokenizer build"]  # one build a process
    assert without_run(reader.kept(str(copy), None, folder)) == fresh_figures(copy)


def test_without_inotify_the_reader_looks_at_its_files_reads_ahead_and_still_ends_when_no_run_asks(tmp_path, monkeypatch):
    import threading
    import time

    from foldscope.core.cli import statusline_reader as reader
    from tests.core.live_sessions import append, assistant, rounds, user

    init = reader.Growth.__init__

    def no_inotify(self) -> None:
        init(self)
        self.close()

    monkeypatch.setattr(reader.Growth, "__init__", no_inotify)
    copy = tmp_path / "live.jsonl"
    append(copy, rounds(0, 30))
    folder = tmp_path / "cache" / "statusline"
    engines: dict = {}
    reader.update(str(copy), None, folder, engines)
    serving = threading.Thread(target=reader.serve, args=(folder, engines, 4.0), daemon=True)
    serving.start()
    append(copy, [user(30, "question 30"), assistant(30, "answer 30", 9_000)])
    deadline = time.monotonic() + 30
    while (reader.kept(str(copy), None, folder) is None) and time.monotonic() < deadline:
        time.sleep(0.05)
    kept = reader.kept(str(copy), None, folder)
    assert kept is not None and kept["requests"] == 31  # read ahead: no run asked
    serving.join(timeout=30)
    assert not serving.is_alive() and not (folder / reader.SOCKET).exists()  # reading ahead kept it no longer


@needs_dev
@pytest.mark.skipif(not hasattr(os, "fork"), reason="the warm reader is forked (POSIX)")
def test_a_socket_left_by_a_killed_reader_is_taken_over(tmp_path, capsys):
    import socket as sockets
    import time

    copy = tmp_path / "live.jsonl"
    lines = SESSION.read_bytes().splitlines(keepends=True)
    copy.write_bytes(b"".join(lines[:-1]))
    folder = tmp_path / "cache" / "statusline"
    folder.mkdir(parents=True)
    left = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    left.bind(str(folder / "reader.sock"))
    left.close()  # the file stays, nothing listens: as after a reader was killed
    env = {**os.environ, "FOLDSCOPE_CACHE": str(tmp_path / "cache"), "FOLDSCOPE_STATUSLINE_IDLE": "3"}

    def hook() -> dict:
        return hook_in_a_process(copy, env)

    assert hook()["_run"]["how"] == "read"
    with open(copy, "ab") as handle:
        handle.write(lines[-1])
    assert hook()["_run"] in reader_runs(len(lines[-1]))  # the new reader answered (or read the line ahead)
    deadline = time.monotonic() + 60
    while (folder / "reader.sock").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (folder / "reader.sock").exists()


@needs_dev
def test_a_warm_engine_goes_on_from_its_last_measure_with_the_figures_a_fresh_read_gives(tmp_path):
    # core.request.trace_resume: the counting pass goes on from the requests measured a line ago; every figure is
    # the one a fresh engine (the whole trace measured) gives at the same point.
    from foldscope.core.readout.status import StatusEngine

    lines = SESSION.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "live.jsonl"
    copy.write_bytes(b"".join(lines[: len(lines) - 30]))
    warm = StatusEngine(str(copy))
    warm.update()
    resumed = []
    for line in lines[len(lines) - 30 :]:
        before = len(warm.follower.session().trace)
        with open(copy, "ab") as handle:
            handle.write(line)
        shown = warm.update()
        resumed.append((warm.resume.resumed, before))
        assert shown == StatusEngine(str(copy)).update()
    assert all(0 < went_on <= before for went_on, before in resumed if before), resumed
    assert sum(went_on == before for went_on, before in resumed) >= len(resumed) // 2, resumed


def test_after_one_new_request_a_warm_engine_measures_only_it_and_tokenises_only_what_it_adds(tmp_path, monkeypatch):
    from foldscope.core.readout.status import StatusEngine
    from foldscope.core.request import tokens
    from foldscope.core.request.count import Counter
    from tests.core.live_sessions import append, assistant, rounds, user

    monkeypatch.setattr(tokens, "BACKEND", tokens.SLOW)  # by passages, as test_a_grown_run_tokenises_only_... says
    copy = tmp_path / "live.jsonl"
    append(copy, rounds(0, 200))
    warm = StatusEngine(str(copy))
    warm.update()
    measured: list[int] = []
    measure = Counter.measure

    def counting(self, messages, *args, **kwargs):
        measured.append(len(messages))
        return measure(self, messages, *args, **kwargs)

    monkeypatch.setattr(Counter, "measure", counting)
    grown = CountingEncoding()
    monkeypatch.setattr(tokens, "_helper", grown)
    new = [user(200, "question 200: " + "word " * 40), assistant(200, "answer 200: " + "reply " * 60, 43_000)]
    size = copy.stat().st_size
    append(copy, new)
    shown = warm.update()
    assert warm.bytes_read == copy.stat().st_size - size  # only the bytes the file gained were read
    # The new request, and the next one (the view after its answer), each once or twice (its size, its prediction):
    # never the 200 before it.
    assert len(measured) <= 4, measured
    assert shown["requests"] == 201 and warm.resume.resumed == 200  # the 200 measured before went on as they were
    gained = copy.stat().st_size - size
    assert 0 < grown.chars < gained, (grown.chars, gained)  # what the new messages hold, once


@needs_dev
def test_a_warm_measure_gives_every_row_prediction_and_cache_row_a_fresh_measure_gives(tmp_path):
    # Beyond the status line's own figures: every request's row (its prediction, flags and stretch), the next
    # request's rule and the whole cache report (each request's causes and price) of a measure that went on from the
    # last line's (the counting pass and the predictions carried) equal a fresh measure's at each of the last 30 lines.
    from foldscope.core.forensics.cache_report import cache_report
    from foldscope.core.forensics.causes import CausesCarry
    from foldscope.core.formats.follow import Follower
    from foldscope.core.readout.document import _no_report
    from foldscope.core.readout.trace_facts import measure_requests
    from foldscope.core.request.count import Counter
    from foldscope.core.request.trace_resume import TraceResume

    def measured(session, counter, resume=None):
        facts = measure_requests(session, counter, _no_report, None, cache_pass=True, resume=resume)
        trace = facts.measure.trace
        steps = facts.cache_pass
        if resume is not None:  # the attribution and prices carried as the status line carries them
            resume.causes = resume.causes or CausesCarry()
        heads = [r.unseen_head for r in trace.rows]
        carry = resume.causes if resume is not None else None
        cache = cache_report(session, facts.measure.policy, measured=steps.measured(heads), tokens=steps.tokens, carry=carry)
        rule = trace.next_rule
        return trace.rows, trace.next_predicted, vars(rule.predictor), rule.last_stretch, cache.rows, cache.priced

    lines = SESSION.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "live.jsonl"
    copy.write_bytes(b"".join(lines[: len(lines) - 30]))
    follower, counter, resume = Follower(str(copy)), Counter(), TraceResume()
    follower.poll()
    measured(follower.session(), counter, resume)
    carried = 0
    for line in lines[len(lines) - 30 :]:
        with open(copy, "ab") as handle:
            handle.write(line)
        follower.poll()
        kept = resume.kept.predicted if resume.kept is not None else None
        attributed = list(resume.causes.rows)  # the cache rows of the line before
        warm = measured(follower.session(), counter, resume)
        fresh_follower = Follower(str(copy))
        fresh_follower.poll()
        assert warm == measured(fresh_follower.session(), Counter())
        went_on = kept is not None and all(a is b for a, b in zip(kept.rows, resume.kept.predicted.rows))  # not made again
        carried += went_on and all(a is b.causes for a, b in zip(attributed, warm[4]))
    assert carried >= 15, carried


def test_install_takes_the_agent_by_the_name_sessions_gives_it_too(capsys):
    """New user 27: `sessions --agent` takes claude_code and `statusline --install --agent` refused it (only claude)."""
    assert cli.main(["statusline", "--install", "--agent", "claude"]) == 0
    claude = capsys.readouterr().out
    assert cli.main(["statusline", "--install", "--agent", "claude_code"]) == 0
    assert capsys.readouterr().out == claude and '"statusLine"' in claude


@needs_dev
def test_a_1m_session_is_measured_against_the_window_claude_code_says_it_runs_the_model_in(monkeypatch, capsys):
    """The transcript names the model without [1m], so the file alone gives Claude Code's 200,000; the status line's
    input says the window (context_window_size 1,000,000, model id ...[1m]): the line shows that window and the
    auto-compact point Claude Code's rule puts in it (less 20,000 for output and a 13,000 buffer), never 200,000."""
    from foldscope.core.cli.statusline import render

    one_m = stdin_object(SESSION, model={"id": "claude-sonnet-4-5-20250929[1m]"}, context_window={"context_window_size": 1_000_000})
    shown = json.loads(run_hook(monkeypatch, capsys, json.dumps(one_m), "--json"))
    limits = {lim["name"]: lim["tokens"] for lim in shown["next"]["agent"]}
    assert limits == {"context window": 1_000_000, "compaction point": 967_000}
    requests = cli_json(capsys, "requests", str(SESSION))
    line = render(shown, 0.0)
    assert f"next {requests['next_predicted']:,} of 1,000,000 (" in line and "of compaction 967,000)" in line
    plain = json.loads(run_hook(monkeypatch, capsys, json.dumps(stdin_object(SESSION)), "--json"))  # it says 200,000
    assert {lim["name"]: lim["tokens"] for lim in plain["next"]["agent"]} == {"context window": 200_000, "compaction point": 167_000}


def test_at_a_terminal_without_a_file_it_says_what_it_reads_instead_of_waiting(monkeypatch, capsys):
    """Polish 6: `foldscope statusline` typed at a terminal waited on stdin for JSON that never came, saying nothing."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

        def read(self, *args):  # never reached: a terminal's read would wait for the user
            raise AssertionError("read a terminal's stdin")

    monkeypatch.setattr(sys, "stdin", Terminal())
    assert statusline.main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert '{"transcript_path": FILE} on stdin' in captured.err and "--file FILE" in captured.err


def test_a_model_name_holding_control_characters_reaches_the_second_line_escaped(tmp_path, monkeypatch, capsys):
    """review8: the model was escaped where the line names it, but not inside the context window's source ("Claude
    Code's rule for MODEL"), so a session's OSC reached the terminal raw there."""
    model = "claude-sonnet-4-5-20250929\x1b]0;retitled\x07"
    session = tmp_path / "s.jsonl"
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "hello"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "timestamp": "2026-01-01T00:00:05Z",
         "message": {"id": "m1", "role": "assistant", "model": model, "content": [{"type": "text", "text": "hi"}],
                     "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0,
                               "cache_creation_input_tokens": 100}}},
    ]  # fmt: skip
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    two = run_hook(monkeypatch, capsys, json.dumps({"transcript_path": str(session)}), "--no-color", "--lines", "2")
    assert "\x1b" not in two and "\x07" not in two
    assert "context window: Claude Code's rule for claude-sonnet-4-5-20250929\\x1b]0;retitled\\x07" in two


def test_a_bill_under_a_cent_keeps_its_digits_never_reading_as_free():
    # review9: a Copilot CLI session that cost $0.0001 read "$0.00" on the line, as if free, where `sessions` prints
    # $0.0001; cents stay cents, as Claude Code's own line gives them.
    got = [statusline._usd(v) for v in (0.0016, 0.00004, 0.0, 0.23, 12.5, None)]
    assert got == ["$0.0016", "<$0.0001", "$0.00", "$0.23", "$12.50", "n/a"]


def test_install_says_it_replaces_the_users_own_status_line_and_a_second_write_keeps_the_first_backup(tmp_path, capsys):
    """review11: a second --install --write within the same second wrote the changed settings over the dated backup
    that held the user's own statusLine, and neither run said it replaced one: the only copy of it was lost."""
    settings = tmp_path / "settings.json"
    own = {"model": "opus", "statusLine": {"type": "command", "command": "~/my-line.sh"}}
    settings.write_text(json.dumps(own))
    assert statusline.main(["--install", "--settings", str(settings)]) == 0
    assert "has a statusLine of its own" in capsys.readouterr().out and json.loads(settings.read_text()) == own
    assert statusline.main(["--install", "--write", "--settings", str(settings)]) == 0
    assert "replaces the statusLine" in capsys.readouterr().out
    assert statusline.main(["--install", "--write", "--settings", str(settings)]) == 0
    assert "already there" in capsys.readouterr().out
    backups = [json.loads(b.read_text()) for b in tmp_path.glob("settings.json.*.bak")]
    assert backups == [own]  # the user's own line kept, once: the second run wrote nothing


def test_a_backup_in_the_same_second_as_another_takes_a_name_of_its_own(tmp_path, monkeypatch, capsys):
    from foldscope.core.cli import statusline_install

    monkeypatch.setattr(statusline_install.time, "strftime", lambda _format: "20261206-130306")
    settings = tmp_path / "settings.json"
    for n in range(3):
        settings.write_text(json.dumps({"n": n}))
        assert statusline_install.write_settings(settings, lambda s: s.update({"m": 1})) == 0
    assert sorted(json.loads(b.read_text())["n"] for b in tmp_path.glob("settings.json.*.bak")) == [0, 1, 2]


def test_install_for_an_agent_it_cannot_set_up_says_where_the_line_goes_instead_of_refusing_the_name(tmp_path, capsys):
    """review11: `statusline --install --agent codex` was refused as an invalid choice (claude, claude_code, pi), where
    docs/cli.md gives Codex and the others `follow FILE --line`: every agent `sessions --agent` names is now taken,
    and one foldscope cannot set up is told where its line goes, nothing written."""
    from foldscope.core.formats.registry import agents

    for spec in agents():
        settings = tmp_path / f"{spec.name}.json"
        assert cli.main(["statusline", "--install", "--agent", spec.name, "--write", "--settings", str(settings)]) == 0
        out = capsys.readouterr().out
        if spec.name in ("claude_code", "pi"):
            continue
        assert "foldscope follow FILE --line" in out and "nothing was written" in out and spec.title in out, out
        assert not settings.exists()
    assert cli.main(["statusline", "--install", "--agent", "codex"]) == 0
    assert "openai/codex#20244" in capsys.readouterr().out


def test_every_agent_sessions_names_is_taken_by_install_either_set_up_or_told_where_its_line_goes():
    """statusline.ELSEWHERE is written out (its parser must not import the formats' registry): it stays every agent
    `sessions --agent` names but the two foldscope installs into."""
    from foldscope.core.cli.statusline import ELSEWHERE
    from foldscope.core.formats.registry import agents

    assert set(ELSEWHERE) == {spec.name for spec in agents()} - {"claude_code", "pi"}
