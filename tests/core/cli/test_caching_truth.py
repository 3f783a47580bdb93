"""Prompt caching left unset is *caching as recorded*, one state in one set of words on every command: replay's and
inspect's --json say it as null (never false, which is off) beside the words, and the cache replay models rests on the
file's reported cache reads (core.model.caching)."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli.main import main

MARKS = "caching as recorded: marks where the file's usage shows cache reads, modelled where ADR-0127 puts them"
NONE = "caching as recorded: no marks, the file's usage shows no cache reads"


def run_json(capsys, *argv) -> dict:
    assert main([*map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def reported_cache_reads(path) -> int:
    """A Claude Code file's reported cache reads, read apart from foldscope's reader (each request's last usage)."""
    usage = {}
    for line in open(path, encoding="utf-8"):
        entry = json.loads(line)
        if isinstance(entry, dict) and entry.get("type") == "assistant" and (entry.get("message") or {}).get("usage"):
            usage[entry.get("requestId") or entry["message"].get("id")] = entry["message"]["usage"]
    return sum(u.get("cache_read_input_tokens") or 0 for u in usage.values())


@pytest.mark.parametrize("name", ["short.jsonl", "session-9eda1058.jsonl", "handmade_session_b.jsonl"])
def test_caching_left_unset_is_as_recorded_on_replay_and_inspect_as_the_files_usage_shows(capsys, corpus_dev, name):
    path = corpus_dev / "claude_code" / name
    reads = reported_cache_reads(path)
    replay = run_json(capsys, "replay", path, "--strategy", "recorded")
    inspect = run_json(capsys, "inspect", path)
    said = MARKS if reads else NONE
    assert replay["settings"]["caching"] is None and inspect["policy"]["caching"] is None  # unset, not off
    assert replay["cache"] == {"mode": "marks" if reads else "off", "why": said} and inspect["policy"]["caching_why"] == said
    recorded = replay["totals"][0]
    assert recorded["cache_read"] == reads  # the bill's reads are the file's, whatever the model
    cached = recorded["modelled_cache_read"] + recorded["modelled_cache_write"]
    assert (cached > 0) == (reads > 0)  # marks modelled where the file shows reads (a first request writes), only there


def test_caching_said_on_or_off_is_that_on_replay(capsys, corpus_dev):
    path = corpus_dev / "claude_code" / "short.jsonl"
    for flag, value, said, mode in (
        ("--caching", True, "caching on: marks placed as ADR-0127 says", "marks"),
        ("--no-caching", False, "caching off in the policy: no marks placed, so no cache reads", "off"),
    ):
        replay = run_json(capsys, "replay", path, "--strategy", "recorded", flag)
        assert replay["settings"]["caching"] is value and replay["cache"] == {"mode": mode, "why": said}


def test_a_payload_with_caching_left_unset_says_as_recorded_not_caching_off(capsys, corpus_dev):
    """`requests --payload K` said 'no block (caching off)' on a file its usage bills with cache reads."""
    path = str(corpus_dev / "claude_code" / "short.jsonl")
    shown = run_json(capsys, "requests", path, "--payload", "0")["payload"]
    assert shown["marks"] == [] and shown["caching_why"] == f"{MARKS}; the compiled request carries marks only with caching on"
    assert main(["requests", path, "--payload", "0"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == f"request 0: cache marks at no block ({shown['caching_why']})" and "caching off" not in last


def test_the_caching_flags_help_says_unset_is_as_recorded(capsys):
    """`--help` said unset was 'the stored option' alone: a Claude Code file stores none, and is then as recorded."""
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "(default: the stored option, else as recorded (marks where the file's usage shows cache reads))" in said
