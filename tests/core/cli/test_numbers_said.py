"""Every table and line the CLI prints writes a count of 1,000 or more with its separators and agrees a noun with
its count: each command's text output on dev files scanned for bare 4+-digit numbers and for "1 requests"."""

from __future__ import annotations

import re
import shutil

import pytest

from foldscope.core.cli.main import main

FILES = (
    "claude_code/tool_heavy.jsonl",
    "codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
    "pi/earendil-works-pi_prompt-cache-replay-session.jsonl",
    "lionagi/branch_v0.36.0_after_context_fold.synthetic.json",
)
# A number that is part of a word, a path, a name, a time or a version is not a count: what touches it says so.
NUMBER = re.compile(r"(?<![\w./\-:#@+=$])\d[\d,]*(?:\.\d+)?(?![\w/\-:])")
# "1 requests", "1 compactions": a one with a plural noun (a word in s after it, not "1 of 3").
ONE_PLURAL = re.compile(
    r"(?<![\d.,])\b1 (requests|messages|sessions|compactions|folds|samples|rows|notes|items|marks|"
    r"tokens|calls|results|characters|bodies|copies|writes|literals|skipped|were)\b"
)


def bare(text: str, quoted: list[str]) -> list[str]:
    """The numbers of 4+ integer digits written without separators, outside the given file names and dates."""
    for name in quoted:
        text = text.replace(name, " ")
    text = re.sub(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?", " ", text)  # a date, a time of day
    found = []
    for match in NUMBER.finditer(text):
        whole = match.group().split(".")[0]
        if "," not in whole and len(whole) >= 4:
            found.append(text[max(0, match.start() - 40) : match.end() + 10].replace("\n", " | "))
    return found


def commands(path: str, tmp: str) -> list[list[str]]:
    return [
        ["inspect", path],
        ["requests", path],
        ["requests", path, "--payload", "0", "--caching"],
        ["composition", path],
        ["cache", path],
        ["compactions", path],
        ["view", path, "--record"],
        ["fold", path, "--ceiling", "20000"],
        ["replay", path, "--strategy", "recorded,adr", "--ceiling", "20000"],
        ["report", path, "-o", f"{tmp}/report.html"],
    ]


def said(argv: list[str], capsys) -> str:
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0, argv
    return out


@pytest.mark.parametrize("name", FILES)
def test_each_command_s_text_writes_thousands_with_separators_and_agrees_its_nouns(name, corpus_dev, tmp_path, capsys):
    path = corpus_dev / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    problems = []
    for argv in commands(str(path), str(tmp_path)):
        text = said(argv, capsys)
        if argv[0] == "requests" and "--payload" in argv:
            text = text.split("the compiled payload", 1)[0]  # the payload is the session's own text, as written
        if argv[0] == "view":
            text = "\n".join(line[:40] for line in text.splitlines())  # the previews are session text
        problems += [f"{' '.join(argv[:1])}: {b}" for b in bare(text, [str(path), str(tmp_path)])]
        problems += [f"{' '.join(argv[:1])}: {m.group()}" for m in ONE_PLURAL.finditer(text)]
    assert problems == []


def test_folder_tables_write_thousands_with_separators(corpus_dev, tmp_path, capsys):
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in FILES[:3]:
        if not (corpus_dev / name).exists():
            pytest.skip(f"{corpus_dev / name} is absent")
        shutil.copyfile(corpus_dev / name, folder / name.split("/")[1])
    problems = []
    for argv in (["cache", str(folder)], ["compactions", str(folder)], ["replay", str(folder), "--strategy", "recorded"]):
        text = said([*argv, "--workers", "1"], capsys)
        problems += [f"{argv[0]}: {b}" for b in bare(text, [str(folder / n.split("/")[1]) for n in FILES] + [str(folder)])]
        problems += [f"{argv[0]}: {m.group()}" for m in ONE_PLURAL.finditer(text)]
    assert problems == []


def test_the_scan_finds_a_bare_count_and_a_one_with_a_plural():
    assert bare("ceiling 200000 (auto)", []) and bare("lost literals 3900", [])
    assert not bare("ceiling 200,000; scale 1.0234; 2026-02-23 12:40; o200k; /tmp/x-2026/f.jsonl", ["/tmp/x-2026/f.jsonl"])
    assert ONE_PLURAL.search("these 1 were sent") and ONE_PLURAL.search("1 compactions or folds")
    assert not ONE_PLURAL.search("1 compaction, 21 requests")


def test_the_issue_s_own_examples_read_with_separators_and_agreeing_nouns():
    from foldscope.core.cli.forensics import format_cache, format_compactions
    from foldscope.core.cli.words import num, plural

    assert (num(200000), num(3900), num(None), num(999)) == ("200,000", "3,900", "-", "999")
    assert (plural(1, "compaction"), plural(2, "compaction"), plural(1204, "request"), plural(1, "body", "bodies"), plural(3, "body")) == (
        "1 compaction",
        "2 compactions",
        "1,204 requests",
        "1 body",
        "3 bodies",
    )
    row = {"file": "a.jsonl", "compactions": [{}], "totals": {"lost_literals": 3900, "summariser_cost_usd": None}}
    text = format_compactions({"folder": "d", "sessions": 1, "skipped": [], "table": [row]})
    assert "exact details lost  3,900" in text and "1 session in d" in text and "literals" not in text
    one = format_compactions({"file": "a.jsonl", "format": "pi", "compactions": [], "unsent": []})
    assert "0 compactions or folds" in one
    parts = {
        p: {"tokens": 1000, "cost_usd": 0.1}
        for p in ("fresh", "cache_read", "first", "append", "rewrite", "expired", "provider", "unexplained", "output")
    }
    totals = {"by_cause": parts, "bill_usd": 1.0, "total_usd": 1.0, "children": {"subagents": {}, "summariser": {}}, "cache_write": 1000}
    table = [{"file": f"s{i}.jsonl", "requests": 1500, "totals": totals} for i in range(6)]
    folder = format_cache({"folder": "d", "sessions": 6, "skipped": [], "table": table, "totals": totals})
    assert "(the sessions' own requests)" in folder and "this session's" not in folder and "requests  1,500" in folder


def test_the_reports_written_line_agrees_its_noun_with_one_request():
    """New user 27: `report` on a session of one request said "1 requests"."""
    from foldscope.core.cli.report import format_report

    said = format_report({"written": "r.html", "requests": 1, "largest_request": 0, "sections": ["Summary"]})
    assert said == "wrote r.html: 1 request; the largest is request 0; sections: Summary"
    assert not ONE_PLURAL.search(said)


def test_the_scale_reads_to_three_places_in_inspect_requests_and_composition_as_in_the_window(corpus_dev, capsys):
    """New user 27: `requests` printed the scale column as 1, 1.011, 1.02 (and inspect "scale 1"), the window 1.000."""
    import re

    path = str(corpus_dev / "claude_code" / "session-9eda1058.jsonl")
    said = []
    for command in ("inspect", "requests", "composition"):
        assert main([command, path]) == 0
        said.append(capsys.readouterr().out)
    scales = re.findall(r"scale (\S+?)\)", said[0] + said[2])
    scales += [line.split()[8] for line in said[1].splitlines() if re.match(r"\s+\d+\s+[\d,]+\s+[\d,]+", line)]
    assert len(scales) >= 7 and all(re.fullmatch(r"\d\.\d{3}", s) for s in scales), scales


def test_inspect_writes_a_record_of_over_a_thousand_messages_with_its_separators(corpus_dev, capsys):
    """review8: inspect said "full record: 1305 messages ... (88 instruction, 453 assistant, ...)" of pi's large session
    (the scan's files all hold fewer than 1,000)."""
    path = corpus_dev / "pi" / "pi-mono_large-session.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    text = said(["inspect", str(path)], capsys)
    assert "full record: 1,305 messages" in text and "active view: 1,305 messages" in text
    assert bare(text, [str(path)]) == []


def test_an_at_request_past_a_one_request_session_names_its_file_and_agrees_its_noun(corpus_dev, capsys):
    """review8: composition and fold said "the session has 1 requests (0 to 0)" (view said "1 request"), and fold's
    line named no file."""
    path = corpus_dev / "claude_code" / "short.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    for argv in (["composition", str(path)], ["fold", str(path), "--ceiling", "50000"], ["view", str(path)]):
        assert main([*argv, "--at-request", "5"]) == 2
        err = capsys.readouterr().err
        assert f"{path}: --at-request 5: the session has 1 request (0 to 0)" in err, (argv[0], err)
        assert not ONE_PLURAL.search(err)
