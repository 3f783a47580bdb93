"""Every column of every table the CLI prints is explained in its command's --help and in docs/cli.md, in the same
words; the tables' headings name only columns so explained."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from foldscope.core.cli.main import main

DOCS = Path(__file__).resolve().parents[3] / "docs" / "cli.md"
TABLES = [  # (the command's words, the module, its columns)
    (["requests"], "foldscope.core.cli.requests", "COLUMNS"),
    (["view"], "foldscope.core.cli.view", "COLUMNS"),
    (["sessions"], "foldscope.core.cli.sessions", "COLUMNS"),
    (["cache"], "foldscope.core.cli.forensics", "CACHE_COLUMNS"),
    (["compactions"], "foldscope.core.cli.forensics", "COMPACTION_COLUMNS"),
    (["composition"], "foldscope.core.cli.composition", "COLUMNS"),
    (["replay"], "foldscope.core.cli.replay", "ROWS"),
    (["tune"], "foldscope.core.cli.tune", "COLUMNS"),
    (["library", "list"], "foldscope.core.cli.library", "COLUMNS"),
]


def flat(text: str) -> str:
    return " ".join(text.replace("\\|", "|").split())


def help_of(words: list[str], capsys) -> str:
    with pytest.raises(SystemExit):
        main([*words, "--help"])
    return flat(capsys.readouterr().out)


@pytest.mark.parametrize("words, module, name", TABLES, ids=[" ".join(t[0]) for t in TABLES])
def test_each_column_is_explained_in_the_help_and_in_docs_cli_md(words, module, name, capsys):
    columns = getattr(importlib.import_module(module), name)
    shown, docs = help_of(words, capsys), flat(DOCS.read_text(encoding="utf-8"))
    assert f"`foldscope {' '.join(words)}`" in docs
    for column, what in columns:
        assert flat(f"{column} {what}") in shown, column
        assert flat(f"| {column} | {what} |") in docs, column


def test_the_requests_columns_the_issue_asked_about_are_explained(capsys):
    shown = help_of(["requests"], capsys)
    for words in ("predicted", "diff", "from", "prefix", "count (no report yet", "35: request 35's reported input"):
        assert words in shown


@pytest.mark.parametrize("command, module", [("requests", "foldscope.core.cli.requests"), ("view", "foldscope.core.cli.view")])
def test_the_table_heading_names_only_explained_columns(command, module, corpus_dev, capsys):
    path = corpus_dev / "claude_code" / "tool_heavy.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    assert main([command, str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    heading = next(line for line in lines if line.split()[:1] == ["index"])
    names = [n for n, _ in importlib.import_module(module).COLUMNS]
    rest = heading
    for name in sorted(names, key=len, reverse=True):
        rest = rest.replace(name, " ")
    assert rest.split() == []  # every word of the heading is a column explained


def test_the_readme_shows_the_ceiling_as_optional_and_names_the_undocumented_flags():
    readme = (DOCS.parents[1] / "README.md").read_text(encoding="utf-8")
    synopsis = [line for line in readme.splitlines() if line.startswith("    foldscope ")]
    assert not any(" --ceiling N " in f" {line} " and "[--ceiling N" not in line for line in synopsis)
    for flag in ("--per-call", "--first-step", "--tab inspector", "docs/cli.md", "foldscope view FILE"):
        assert flag in readme
