"""One folder, one set of sessions: `usage`, `cache`, `compactions` and `replay` on a folder read the same files (its
own and those in the folders under it), so the folder's bill is one figure on every command."""

from __future__ import annotations

import io
import json
import sys

import pytest

from foldscope.core.cli.main import main
from tests.paths import CORPUS

TOP = "claude_code/session-9eda1058.jsonl"
NESTED = "claude_code/session-196820da.jsonl"


def run_json(capsys, *argv) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def bill_sonnet_4_5(path) -> float:
    """A Claude Code file's reported usage, read apart from foldscope's reader (each request's last entry, by requestId),
    priced at Claude Sonnet 4.5's list prices (shared/pricing-facts.md: input 3.00, 5-minute write 1.25x, read 0.1x,
    output 15.00 per million tokens; both files' requests are under its 200,000 tier and write 5-minute marks only)."""
    usage = {}
    for line in open(path, encoding="utf-8"):
        entry = json.loads(line)
        if isinstance(entry, dict) and entry.get("type") == "assistant" and (entry.get("message") or {}).get("usage"):
            usage[entry.get("requestId") or entry["message"].get("id")] = entry["message"]["usage"]
    assert all(not (u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") for u in usage.values())
    return sum(
        (u["input_tokens"] * 3.0 + u["cache_read_input_tokens"] * 0.3 + u["cache_creation_input_tokens"] * 3.75 + u["output_tokens"] * 15.0)
        / 1e6
        for u in usage.values()
    )


def test_a_folders_bill_is_one_figure_on_usage_cache_and_replay_its_nested_sessions_included(capsys, corpus_dev, tmp_path):
    folder = tmp_path / "projects"
    (folder / "another-project").mkdir(parents=True)
    (folder / "session-9eda1058.jsonl").symlink_to(corpus_dev / TOP)
    (folder / "another-project" / "session-196820da.jsonl").symlink_to(corpus_dev / NESTED)
    bill = bill_sonnet_4_5(corpus_dev / TOP) + bill_sonnet_4_5(corpus_dev / NESTED)
    assert f"{bill:.2f}" == "7.92"
    usage = run_json(capsys, "usage", str(folder), "--plain", "--workers", "1")
    cache = run_json(capsys, "cache", str(folder), "--workers", "1")
    replay = run_json(capsys, "replay", str(folder), "--strategy", "recorded")
    compactions = run_json(capsys, "compactions", str(folder), "--workers", "1")
    assert usage["total"]["sessions"] == cache["sessions"] == replay["sessions"] == compactions["sessions"] == 2
    assert usage["total"]["cost_usd"] == pytest.approx(bill, abs=1e-5)
    assert cache["totals"]["total_usd"] == pytest.approx(bill, abs=1e-5)
    assert sum(r["cost_usd"] for r in replay["table"]) == pytest.approx(bill, abs=1e-5)


def test_a_subagent_file_beside_its_session_is_counted_in_it_on_usage_cache_and_replay(capsys, corpus_dev, tmp_path):
    """Claude Code's older layout keeps a session's agent-*.jsonl beside it: one session on every command, its
    subagents' requests in the folder's bill once (replay replays each file on its own and says so)."""
    folder = tmp_path / "project"
    folder.mkdir()
    private = corpus_dev / "claude_code" / "tmp-private"
    names = sorted(p.name for p in private.glob("*.jsonl"))
    assert len(names) == 3 and sum(n.startswith("agent-") for n in names) == 2
    for name in names:
        (folder / name).symlink_to(private / name)
    usage = run_json(capsys, "usage", str(folder), "--plain", "--workers", "1")
    cache = run_json(capsys, "cache", str(folder), "--workers", "1")
    replay = run_json(capsys, "replay", str(folder), "--strategy", "recorded")
    assert usage["total"]["sessions"] == cache["sessions"] == replay["sessions"] == 1 and replay["subagent_files"] == 2
    assert len({r["file"] for r in replay["table"]}) == 3
    assert sum(r["cost_usd"] for r in replay["table"]) == pytest.approx(cache["totals"]["total_usd"], abs=1e-5)
    assert usage["total"]["cost_usd"] == pytest.approx(cache["totals"]["total_usd"], abs=1e-5)
    assert main(["replay", str(folder), "--strategy", "recorded"]) == 0
    assert capsys.readouterr().out.startswith(f"1 session in {folder} (and 2 subagent files beside their sessions")


def test_tune_counts_a_subagent_file_beside_its_session_in_it_as_usage_does(capsys, corpus_dev, tmp_path):
    """`tune DIR` sweeps a subagent's agent-*.jsonl as a file of its own but counts the sessions `usage` counts: on
    the dev corpus's claude_code folder both say 11 (13 files, two of them tmp-private's subagents), and one bill."""
    folder = corpus_dev / "claude_code"
    usage = run_json(capsys, "usage", str(folder), "--plain", "--workers", "1")
    tune = run_json(capsys, "tune", str(folder), "--workers", "1")
    assert tune["sessions"] == usage["total"]["sessions"] == 11 and tune["subagent_files"] == 2
    assert len({r["file"] for r in tune["rows"]}) == 13
    assert tune["policies"][0]["bill_usd"] == pytest.approx(usage["total"]["cost_usd"], abs=1e-5)
    assert main(["tune", str(folder), "--workers", "1"]) == 0
    assert capsys.readouterr().out.startswith("13 files swept: 11 sessions and 2 subagent files beside their sessions")


def test_tunes_progress_counts_the_files_its_result_names_with_the_same_total(capsys, corpus_dev):
    """Polish 6: the progress said "13/13 sessions" where the result said 11 sessions (and 2 subagent files): one
    unit and one total on both, the files, the result saying what they were."""
    assert main(["tune", str(corpus_dev / "claude_code"), "--workers", "1", "--progress"]) == 0
    captured = capsys.readouterr()
    last = captured.err.replace("\r", "\n").strip().splitlines()[-1]
    assert "] 13/13 files, 0 failed," in last
    assert captured.out.startswith("13 files swept: 11 sessions and 2 subagent files beside their sessions")
    # and the recommendation's saving counts the same rows by the same noun (it said "over 13 sessions")
    assert "(modelled): " in captured.out and " over 13 files; a file's saving " in captured.out


class _Terminal(io.StringIO):
    """stderr as a terminal: the progress bar is written only there."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("command", ["usage", "cache", "compactions", "replay"])
def test_a_folder_s_sessions_are_counted_off_on_a_terminal_as_tune_counts_them(command, corpus_dev, tmp_path, monkeypatch, capsys):
    """review8: `usage`, `cache`, `compactions` and `replay` on a folder of 27 sessions ran 5 to 6 s saying nothing until
    the table (tune showed a bar); each now counts the files off on stderr when it is a terminal, and writes nothing there
    when it is not."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in (TOP, "claude_code/short.jsonl"):
        if not (corpus_dev / name).exists():
            pytest.skip(f"{corpus_dev / name} is absent")
        (folder / name.split("/")[1]).write_bytes((corpus_dev / name).read_bytes())
    extra = ["--strategy", "recorded"] if command == "replay" else []
    assert main([command, str(folder), "--workers", "1", *extra]) == 0
    assert "files" not in capsys.readouterr().err  # not a terminal: no bar
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main([command, str(folder), "--workers", "1", *extra]) == 0
    assert "] 1/2 files, 0 failed" in terminal.getvalue() and terminal.getvalue().endswith("] 2/2 files, 0 failed, about 0 s left \n")


FOLDER_COMMANDS = (("cache", "--workers", "1"), ("compactions", "--workers", "1"), ("replay", "--strategy", "recorded"))


def test_a_log_of_several_samples_in_a_folder_is_each_sample_on_every_folder_command_as_usage_counts_it(capsys, tmp_path):
    """review10: `usage DIR` counted each sample of an Inspect AI log of several (7afc2e6), where `cache`, `compactions`
    and `replay` on the same folder skipped the log whole, asking for --sample: 18 sessions on one, 5 and 2 skipped on
    the others. Each sample is now a row of its own on every folder command, named as `usage` names it."""
    staged = CORPUS / "staged" / "inspect"
    several, one = staged / "2025-05-12T20-28-13-04-00_popularity.json", staged / "log_images.json"
    if not several.exists() or not one.exists():
        pytest.skip(f"{staged} is absent")
    folder = tmp_path / "logs"
    folder.mkdir()
    for log in (several, one):
        (folder / log.name).symlink_to(log)
    named = {f"{folder / several.name} --sample {n}:1" for n in (1, 2, 3)} | {str(folder / one.name)}
    usage = run_json(capsys, "usage", str(folder), "--by", "session", "--plain", "--workers", "1")
    assert usage["skipped"] == [] and usage["total"]["sessions"] == 4 and {r["session"] for r in usage["rows"]} == named
    for argv in FOLDER_COMMANDS:
        result = run_json(capsys, argv[0], str(folder), *argv[1:])
        assert result["skipped"] == [] and result["sessions"] == 4, argv[0]
        assert {r["file"] for r in result["table"]} == named, argv[0]
        if argv[0] == "cache":
            assert result["totals"]["total_usd"] == pytest.approx(usage["total"]["cost_usd"], abs=1e-5)
        if argv[0] == "replay":
            assert sum(r["cost_usd"] for r in result["table"]) == pytest.approx(usage["total"]["cost_usd"], abs=1e-5)
    # and the name a row gives opens that session alone
    assert main(["cache", f"{folder / several.name}", "--sample", "2:1", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["requests"]) == 1


def test_an_aider_history_of_two_runs_in_a_folder_is_each_run_named_by_session_on_every_folder_command(capsys, tmp_path):
    """review10: each launch of aider adds a run to its history; `cache`, `compactions` and `replay` on a folder holding
    one of two runs skipped it ("choose one with --session N"), where `usage` on it counts both runs; and `usage` on
    the folder found no history named other than the hidden .aider.chat.history.md, which `cache` read."""
    from tests.core.formats.test_aider import HISTORY

    folder = tmp_path / "project"
    folder.mkdir()
    history = folder / "chat.aider.chat.history.md"
    history.write_text(HISTORY.replace("¶", "  "))
    usage = run_json(capsys, "usage", str(folder), "--by", "session")  # a history named so is found in a folder
    runs = {f"{history} --session 1", f"{history} --session 2"}
    assert usage["skipped"] == [] and {r["session"] for r in usage["rows"]} == runs
    for argv in FOLDER_COMMANDS:
        result = run_json(capsys, argv[0], str(folder), *argv[1:])
        assert result["skipped"] == [] and result["sessions"] == 2 and {r["file"] for r in result["table"]} == runs, argv[0]
    assert main(["replay", str(folder), "--sample", "1"]) == 2  # a folder's rows are each session: --sample refused
    assert "--sample: for one file" in capsys.readouterr().err


def test_aider_s_default_history_hidden_by_its_name_is_found_in_a_project_folder_by_every_folder_command(capsys, tmp_path):
    """aider writes `.aider.chat.history.md` in the project's root by default: `sessions` finds it there, and so must
    `usage`, `tune` and the folder commands, though their walks leave other hidden files out."""
    from tests.core.formats.test_aider import HISTORY

    folder = tmp_path / "project"
    folder.mkdir()
    history = folder / ".aider.chat.history.md"
    history.write_text(HISTORY.replace("¶", "  "))
    (folder / ".hidden.jsonl").write_text("not a session, and hidden: left out\n")
    runs = {f"{history} --session 1", f"{history} --session 2"}
    usage = run_json(capsys, "usage", str(folder), "--by", "session")
    assert usage["skipped"] == [] and {r["session"] for r in usage["rows"]} == runs
    for argv in FOLDER_COMMANDS:
        result = run_json(capsys, argv[0], str(folder), *argv[1:])
        assert result["skipped"] == [] and {r["file"] for r in result["table"]} == runs, argv[0]


def test_tune_sweeps_each_session_of_a_file_of_several_as_usage_counts_them(capsys, tmp_path):
    """A folder's aider history of two runs and an OpenCode database of two sessions, found by name in tune's walk,
    were each one failure ("the history holds 2 aider runs: choose one with --session N"): tune now replays each of
    their sessions, each row named as usage names it, and bills the same requests usage does."""
    from tests.core.formats.test_aider import HISTORY
    from tests.core.formats.test_opencode import write_db

    folder = tmp_path / "project"
    folder.mkdir()
    history = folder / ".aider.chat.history.md"
    history.write_text(HISTORY.replace("¶", "  "))
    db = write_db(folder / "opencode.db")
    usage = run_json(capsys, "usage", str(folder), "--by", "session")
    named = {r["session"]: r["requests"] for r in usage["rows"]}
    assert len(named) == 4 and usage["skipped"] == [], named
    tune = run_json(capsys, "tune", str(folder))
    assert tune["failed"] == [] and tune["sessions"] == 4
    assert (
        {r["file"] for r in tune["rows"]}
        == set(named)
        == {f"{history} --session 1", f"{history} --session 2", f"{db} --sample ses_A", f"{db} --sample ses_B"}
    )
    assert {r["file"]: r["requests"] for r in tune["rows"]} == named
