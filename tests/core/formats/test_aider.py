"""The Aider reader: a request per usage line with its figures, each run a session, every figure marked approximate."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import detect_format, load_session
from foldscope.core.formats.discover import find_sessions
from foldscope.core.model.session import ReadError
from tests.core.reader_checks import check_session
from tests.paths import corpus_glob

# The usage line as aider's documentation shows it (aider.chat/docs/usage: "Tokens: 4.3k sent, 7 received. Cost:
# $0.013 message, $0.013 session.") and base_coder.calculate_and_show_tokens_and_cost writes it: figures under 1,000
# exact, then "3.2k", then "10k"; older versions exact with commas; the cache figures only when not zero.
DOC_USAGE = re.compile(r"Tokens: ([\d.,]+k?) sent(?:, ([\d.,]+k?) cache write)?(?:, ([\d.,]+k?) cache hit)?, ([\d.,]+k?) received\.")


def _samples() -> list[Path]:
    # Staged until this reader landed; in dev/ once moved: both are globbed (never eval/).
    found = [p for p in corpus_glob("aider/*.md") if p.name != "PROVENANCE.md"]
    if not found:
        pytest.skip("no Aider histories in the corpus")
    return found


def _number(text: str) -> int:
    text = text.replace(",", "")
    return int(float(text[:-1]) * 1000 + 0.5) if text.endswith("k") else int(text)


def independent_usage(path: Path) -> list[tuple[int, int, int, int]]:
    """(fresh input, cache read, cache write, output) of each usage line, in order, read with the documented
    pattern alone: sent is the whole input, the cache figures parts of it."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("> "):
            m = DOC_USAGE.search(line)
            if m:
                sent, write, hit, received = (_number(g) if g else 0 for g in m.groups())
                out.append((sent - write - hit, hit, write, received))
    return out


def _usage(session) -> list[tuple[int, int, int, int] | None]:
    return [(u.input, u.cache_read, u.cache_write, u.output) if u else None for u in (r.usage for r in session.trace)]


def test_each_usage_line_of_a_real_history_is_one_request_with_its_figures():
    for path in _samples():
        assert detect_format(path) == "aider", path
        session = load_session(path)
        check_session(session)
        expected = independent_usage(path)
        assert _usage(session) == expected, path
        assert len(session.trace) == len(expected) > 0
        assert session.model is not None


def test_every_model_the_real_histories_name_is_priced():
    # openai/google_genai.gemini-2.5-pro-preview-05-06: a proxy's name, its `google_genai.` prefix read as a provider's
    from foldscope.core.model import pricing

    for path in _samples():
        model = load_session(path).model
        assert pricing.resolve(model).priced, (path.name, model)


def test_the_real_history_s_bill_matches_the_cost_aider_printed():
    # Every message's cost as aider printed it, summed, against foldscope's pricing of the same rounded figures.
    path = next((p for p in _samples() if p.name.startswith("metadata-aider")), None)
    if path is None:
        pytest.skip("the metadata-aider sample is not in the corpus")
    printed = sum(float(m) for m in re.findall(r"Cost: \$([\d.]+) message", path.read_text()))
    from foldscope.core.model.session_totals import rolled_up

    cost = rolled_up(load_session(path))["total"].cost_usd
    assert cost is not None and abs(cost - printed) / printed < 0.05, (cost, printed)


# A history as aider writes it (Aider-AI/aider @ 5dc9490b : aider/io.py append_chat_history, user_input, ai_output,
# tool_output; aider/coders/base_coder.py calculate_and_show_tokens_and_cost): two runs; an Anthropic model with
# prompt caching, whose usage line carries both cache figures and so puts the cost on the next line without `> `;
# a command; a reflection (lint errors sent back: a second reply and usage line with no input between); a reply cut
# off by ^C (no usage line); /clear; the model's own `#### ` heading and `> ` quote inside a reply. A `¶` stands
# for the two spaces aider ends each of its own lines with (a markdown line break), which the source may not hold.
HISTORY = """
# aider chat started at 2026-03-01 09:00:00

> Aider v0.86.1¶
> Main model: anthropic/claude-sonnet-4-5 with diff edit format, prompt cache, infinite output¶
> Weak model: anthropic/claude-haiku-4-5¶
> Git repo: .git with 3 files¶

#### Add a --verbose flag to cli.py¶
#### ¶
#### and print the config when it is set¶

#### Plan
> Note: the flag is parsed first.

cli.py
```python
<<<<<<< SEARCH
=======
import argparse
>>>>>>> REPLACE
```

> Tokens: 3.2k sent, 2.5k cache write, 344 received. Cost: $0.02 message, $0.02 session.¶
> Applied edit to cli.py¶
> cli.py:3:1: F401 'argparse' imported but unused¶

I removed the unused import.

> Tokens: 4.1k sent, 1.2k cache write, 2.8k cache hit, 120 received.
Cost: $0.01 message, $0.03 session.¶
> Applied edit to cli.py¶
> Commit 1b2614a feat: add --verbose¶

#### /add README.md¶
> Added README.md to the chat¶

#### Update the README too¶

The README now says

> ^C again to exit¶

# aider chat started at 2026-03-01 10:30:00

> Aider v0.86.1¶
> Model: gpt-4o-mini with whole edit format¶

#### What does cli.py do?¶

It parses arguments.

> Tokens: 1,234 sent, 56 received. Cost: $0.00042 request, $0.00042 session.¶

#### /clear¶

#### And now?¶

Nothing else.

> Tokens: 10k sent, 9 received.¶
"""


def _history(tmp_path: Path) -> Path:
    path = tmp_path / "project" / ".aider.chat.history.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HISTORY.replace("¶", "  "))
    return path


def test_a_history_of_two_runs_lists_each_run_and_reads_the_one_chosen(tmp_path, capsys):
    path = _history(tmp_path)
    assert main(["inspect", str(path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["samples"]
    assert [(s["name"], s["requests"], s["messages"]) for s in listed] == [("1", 2, 3), ("2", 2, 3)]
    with pytest.raises(ReadError, match="holds 2 aider runs .*--session N"):
        load_session(path)
    with pytest.raises(ReadError, match="no aider run '7'"):
        load_session(path, sample="7")


def test_a_usage_line_is_a_request_a_reflection_its_own_and_a_cut_off_reply_a_request_without_usage(tmp_path):
    first = load_session(_history(tmp_path), sample="1")
    check_session(first)
    assert _usage(first) == [(700, 0, 2500, 344), (100, 2800, 1200, 120), None]
    assert first.model == "anthropic/claude-sonnet-4-5"
    texts = [first.record.get(r.response_id).text for r in first.trace]
    assert "#### Plan\n> Note: the flag is parsed first." in texts[0]  # the model's heading and quote are its reply
    assert texts[1] == "I removed the unused import." and texts[2] == "The README now says"
    assert first.trace[1].unseen_input and not first.trace[0].unseen_input  # the lint errors aider sent back
    instructions = [m.text for m in first.record if m.kind == "instruction"]
    assert instructions == ["Add a --verbose flag to cli.py\n\nand print the config when it is set", "Update the README too"]
    assert first.extras["unsent"]["aider command"]  # /add is never sent


def test_clear_empties_the_view_and_older_exact_figures_read_as_they_are(tmp_path):
    second = load_session(_history(tmp_path), sample="2")
    assert _usage(second) == [(1234, 0, 0, 56), (10_000, 0, 0, 9)]
    assert second.model == "gpt-4o-mini"
    assert [second.record.get(m).text for m in second.trace[1].view] == ["And now?"]  # /clear: nothing before it


def test_every_figure_is_marked_approximate_and_the_request_contents_said_missing_in_one_line(tmp_path, capsys):
    path = _history(tmp_path)
    for command in ("inspect", "requests", "composition", "cache", "compactions", "replay"):
        assert main([command, str(path), "--session", "2", "--json"]) == 0, command
        out = json.loads(capsys.readouterr().out)
        assert out["usage_precision"] == "approximate" and "rounded" in out["usage_note"], command
        if command in ("composition", "replay"):
            assert out["no_requests"].startswith(f"{command}: Aider's history") and "\n" not in out["no_requests"]
        assert main([command, str(path), "--session", "2"]) == 0, command
        text = capsys.readouterr().out
        assert "usage approximate: Aider records rounded figures" in text, command
    assert main(["requests", str(path), "--session", "2"]) == 0
    assert "~10,000" in capsys.readouterr().out
    assert main(["composition", str(path), "--session", "2"]) == 0  # review8: its predicted input was unmarked
    assert ", predicted input ~" in capsys.readouterr().out.splitlines()[0]
    for sample in _samples()[:1]:  # `usage` over many sessions counts the approximate ones in its figures
        assert main(["usage", str(sample), "--plain", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["approximate_sessions"] == 1
        assert main(["usage", str(sample), "--plain"]) == 0
        assert "of approximate usage" in capsys.readouterr().out


def test_a_history_exported_as_a_branch_keeps_its_figures_marked_approximate(tmp_path, capsys):
    # Found by review8: the export's figures are still aider's rounded ones, and its requests still not in the file.
    out = tmp_path / "exported.json"
    assert main(["export", str(_history(tmp_path)), "--session", "2", "-o", str(out)]) == 0
    capsys.readouterr()
    for command in ("requests", "composition", "replay"):
        assert main([command, str(out), "--json"]) == 0, command
        result = json.loads(capsys.readouterr().out)
        assert result["usage_precision"] == "approximate" and "Aider records rounded" in result["usage_note"], command
        if command != "requests":
            assert result["no_requests"].startswith(f"{command}: Aider's history"), command
    assert main(["requests", str(out)]) == 0
    assert "~10,000" in capsys.readouterr().out


def test_an_exact_format_s_output_carries_no_approximation_mark(capsys):
    found = corpus_glob("pi/*.jsonl")
    if not found:
        pytest.skip("no pi session in the corpus")
    assert main(["requests", str(found[0]), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "usage_precision" not in out and "no_requests" not in out


@pytest.mark.parametrize("command", ["inspect", "requests", "composition", "cache", "compactions", "replay", "view", "export"])
def test_every_command_reads_each_real_history(command, tmp_path, capsys):
    for path in _samples():
        extra = ["-o", str(tmp_path / "out.json")] if command == "export" else ["--json"]
        assert main([command, str(path), *extra]) == 0, (command, path)
        capsys.readouterr()


def test_report_writes_an_html_page_for_a_history_saying_its_usage_is_approximate(tmp_path, capsys):
    path = _history(tmp_path)
    out = tmp_path / "report.html"
    assert main(["report", str(path), "--session", "1", "-o", str(out)]) == 0
    page = out.read_text()
    assert "<html" in page[:500] and "usage approximate: Aider records rounded figures" in page
    assert "Aider&#x27;s history holds the conversation" in page or "Aider's history holds the conversation" in page
    # review8: the report gave the largest request's predicted input unmarked, where every other screen marks it
    assert re.search(r"Largest predicted input</dt><dd>~[0-9]", page) and re.search(r"predicted input ~[0-9]", page)


def test_follow_says_in_one_line_why_an_aider_history_is_not_followed(tmp_path, capsys):
    main(["follow", "--line", "--polls", "1", str(_history(tmp_path))])  # a status line's hook never fails its agent
    said = capsys.readouterr()
    err = (said.err + said.out).strip()
    assert len(err.splitlines()) == 1 and "following reads the line-based formats" in err, err


def test_a_history_is_stored_in_the_library_and_reopened_unread_while_unchanged(tmp_path, capsys):
    path = _history(tmp_path)
    db = tmp_path / "library.db"
    opened = []
    for _ in range(2):
        assert main(["inspect", str(path), "--session", "1", "--db", str(db), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["format"], out["requests"]) == ("aider", 3)
        opened.append(out["library_reopened"])
    assert opened == [False, True]


def test_sessions_finds_the_history_by_its_variable_the_current_folder_s_git_root_and_a_folder_named(tmp_path, capsys):
    path = _history(tmp_path)
    subprocess.run(["git", "init", "-q", str(path.parent)], check=True)
    inside = path.parent / "src" / "deep"
    inside.mkdir(parents=True)
    home = tmp_path / "home"

    def rows(**kw) -> list[tuple[str, str | None, int | None, str | None]]:
        return [(f.path, f.sample, f.requests, f.model) for f in find_sessions(home=home, agents_={"aider"}, **kw)]

    both = [(str(path), "2", 2, "gpt-4o-mini"), (str(path), "1", 3, "anthropic/claude-sonnet-4-5")]  # newest first
    assert rows(environ={}, cwd=inside) == both  # the git root of the current folder
    assert rows(environ={}, cwd=tmp_path) == []  # not below: a folder must be named
    assert rows(environ={}, cwd=tmp_path, folders=[tmp_path]) == both
    moved = tmp_path / "elsewhere.md"
    moved.write_text(HISTORY.replace("¶", "  ").split("# aider chat started at 2026-03-01 10:30:00")[0])
    assert rows(environ={"AIDER_CHAT_HISTORY_FILE": str(moved)}, cwd=tmp_path) == [(str(moved), None, 3, "anthropic/claude-sonnet-4-5")]
    found = find_sessions(environ={}, home=home, agents_={"aider"}, cwd=inside)
    assert found[0].project == str(path.parent) and found[0].as_dict()["usage_precision"] == "approximate"
    assert found[0].cost_usd is not None and found[0].start is not None


@pytest.mark.parametrize(
    "text, problem",
    [
        ("\n# aider chat started at 2026-03-01 09:00:00\n\n#### hi  \n\nhello\n\n> Tokens: 1e9k sent, 3 received.  \n", "usage line"),
        (
            "\n# aider chat started at 2026-03-01 09:00:00\n\n#### hi  \n\nhello\n\n> Tokens: 99999999999999999999k sent, 3 received.  \n",
            "2^63",
        ),
    ],
)
def test_a_bad_usage_line_is_one_warning_naming_its_line(tmp_path, text, problem):
    path = tmp_path / "h.md"
    path.write_text(text)
    session = load_session(path)
    assert len(session.trace) == 1 and session.trace[0].usage is None
    assert any(problem in w and "line 8" in w for w in session.warnings), session.warnings


def test_a_history_of_runs_without_messages_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / ".aider.chat.history.md"
    path.write_text("\n# aider chat started at 2026-03-01 09:00:00\n\n> Newer aider version v0.86.1 is available.  \n")
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err


def test_a_run_that_holds_no_conversation_asked_for_by_number_is_named_as_such_with_the_runs_that_do(tmp_path, capsys):
    """review11: a real history began with a run aider started and quit; `--session 1` said only "no messages found
    for format aider", where the history's other run opens without it."""
    path = tmp_path / ".aider.chat.history.md"
    empty = "\n# aider chat started at 2026-02-28 08:00:00\n\n> Newer aider version v0.86.1 is available.  \n"
    path.write_text(empty + HISTORY.replace("¶", "  ").split("# aider chat started at 2026-03-01 10:30:00")[0])
    assert main(["inspect", str(path), "--session", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "aider run 1 holds no conversation (runs that do: 2)" in err, err
    assert main(["inspect", str(path), "--session", "2"]) == 0


def test_inspect_says_when_a_run_that_records_one_time_ran_not_that_it_lasted_0_s(tmp_path, capsys):
    """review8: every message of an Aider run carries the run's start (the history records no other time), and
    inspect said "ran 2025-12-03 14:43 to 2025-12-03 14:43 UTC (0 s)" of a run of twelve requests."""
    assert main(["inspect", str(_history(tmp_path)), "--session", "1"]) == 0
    ran = capsys.readouterr().out.splitlines()[1]
    assert ran.startswith("ran ") and " UTC in " in ran and " to " not in ran and "(0 s)" not in ran


def test_usage_dates_a_run_s_requests_by_its_start_as_inspect_does(tmp_path, capsys):
    """review9: the history dates only each run's start, so `usage` put every request of a run under an "unknown"
    day (where inspect says the run's date) and --since or --until left them all out."""
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY.replace("¶", "  ").split("# aider chat started at 2026-03-01 10:30:00")[0])
    assert main(["usage", str(path), "--json"]) == 0
    assert [(row["day"], row["requests"]) for row in json.loads(capsys.readouterr().out)["rows"]] == [("2026-03-01", 3)]
    assert main(["usage", str(path), "--since", "2026-03-01", "--until", "2026-03-01", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"]["requests"] == 3


def test_usage_sums_every_run_of_a_history_as_sessions_lists_them(tmp_path, capsys):
    """review9: each launch of aider adds a run to the same history, and `usage` on a history of two refused it
    ("choose one with --session N", an option usage does not take), so a project's aider spend read as nothing."""
    path = _history(tmp_path)
    assert main(["usage", str(path), "--by", "session", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["skipped"] == [] and summary["sessions"] == 2 and summary["approximate_sessions"] == 2
    assert [(row["session"], row["requests"]) for row in summary["rows"]] == [(f"{path} --session 1", 3), (f"{path} --session 2", 2)]
    runs = [load_session(path, sample=n) for n in ("1", "2")]
    assert summary["total"]["output"] == sum(r.usage.output for s in runs for r in s.trace if r.usage)


def test_sessions_names_a_history_s_run_by_the_flag_the_readme_and_its_error_give(tmp_path, monkeypatch, capsys):
    # review9: `sessions` listed an Aider history's runs as "FILE --sample 2", where the README and the history's own
    # error ("choose one with --session N") name them by --session; an Inspect AI log's samples keep --sample.
    path = _history(tmp_path)
    monkeypatch.chdir(path.parent)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert main(["sessions", "--agent", "aider", "--in", str(path.parent)]) == 0
    out = capsys.readouterr().out
    assert f"{path}  --session 2" in out and f"{path}  --session 1" in out and "--sample" not in out
