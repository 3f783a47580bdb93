"""The reader contract: each format one frozen declaration (core.formats.spec), asked wherever a format matters."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import registry
from foldscope.core.formats.spec import CACHE_MODELS, USAGE_PRECISIONS, FormatSpec, Sessions
from tests.core.formats import toy_format

ROOT = Path(__file__).resolve().parents[3]
NAMES = [spec.name for spec in registry.FORMATS]

# Strings that equal a format's name but are not one: each with where it is and what it names instead.
NOT_A_FORMAT = {
    ("app/main.py", "inspect"): "the `inspect` command's name on the command line",
    ("core/cli/main.py", "inspect"): "the `inspect` command's name in the table of commands",
    ("core/model/providers.py", "codex"): "a model name's prefix (codex-mini), not the Codex file format",
    ("core/cli/statusline.py", "pi"): "the agent whose settings `statusline --install --agent pi` writes, not the pi file format",
    ("core/cli/statusline.py", "claude_code"): "`--agent claude_code`, the agent's name as sessions and usage give it, not the format",
    # `statusline --install --agent NAME` for the agents it does not install into (statusline.ELSEWHERE): the agents'
    # names as choices of a command that must start without importing the formats' registry (about 0.1 s)
    **{
        ("core/cli/statusline.py", name): "`--agent NAME`, an agent told where its line goes, not the format"
        for name in ("codex", "gemini_cli", "qwen_code", "copilot_cli", "opencode", "cline", "aider")
    },
}


def _check_field(spec: FormatSpec, field: str) -> str | None:
    """What is wrong with one field of a declaration, or None."""
    value = getattr(spec, field)
    if field in ("name", "title"):
        return None if isinstance(value, str) and value.strip() else "an empty text"
    if field in ("sniff", "read", "window", "compaction"):
        return None if callable(value) else "not callable"
    if field in ("trace_later", "unseen_head", "provider_text", "first_part"):
        return None if isinstance(value, bool) else "not True or False"
    if field in ("samples", "follow", "setup", "prompt_text"):
        return None if value is None or callable(value) else "neither None nor callable"
    if field == "no_summary":
        return None if value is None or (isinstance(value, str) and value.strip()) else "neither None nor a text"
    if field == "cache":
        return None if value in CACHE_MODELS else f"not one of {CACHE_MODELS}"
    if field == "usage_precision":
        return None if value in USAGE_PRECISIONS else f"not one of {USAGE_PRECISIONS}"
    if field == "no_requests":
        return None if value is None or (isinstance(value, str) and value.strip()) else "neither None nor a text"
    if field == "sessions":
        if value is None:
            return None
        if not isinstance(value, Sessions):
            return "not a Sessions"
        empty = [f for f in ("env", "folder") if not getattr(value, f)]
        if empty or not isinstance(value.default, str):
            return f"sessions' {empty or ['default']} empty or not a text"
        if value.places is not None and not callable(value.places):
            return "sessions' places neither None nor callable"
        return None if callable(value.files) and callable(value.project) else "sessions' files or project not callable"
    return "a field this test does not know: say here what a declaration must hold in it"


@pytest.mark.parametrize("spec", registry.FORMATS + [toy_format.SPEC], ids=lambda s: s.name)
def test_every_declared_format_states_every_field(spec):
    problems = {f.name: _check_field(spec, f.name) for f in dataclasses.fields(FormatSpec)}
    assert {k: v for k, v in problems.items() if v} == {}
    for model in (None, "claude-sonnet-4-5", "claude-sonnet-4-5[1m]", "gpt-5"):
        window = spec.window(model)
        assert window is None or (isinstance(window[0], int) and window[0] > 0 and window[1])
    compaction = spec.compaction(200_000)
    assert compaction is None or (0 < compaction[0] < 200_000 and compaction[1])
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "changed"  # type: ignore[misc]


def test_a_field_left_empty_is_named():
    broken = dataclasses.replace(toy_format.SPEC, title="", cache="sometimes", follow="line by line")  # type: ignore[arg-type]
    assert {f.name for f in dataclasses.fields(FormatSpec) if _check_field(broken, f.name)} == {"title", "cache", "follow"}


def test_each_format_has_one_declaration_under_a_name_of_its_own():
    assert len(set(NAMES)) == len(NAMES)
    assert all(registry.format_named(name).name == name for name in NAMES)
    assert registry.format_named("no such format") is None and registry.format_named(None) is None


def format_name_tests(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of each place the source compares with a format's name or lists one in a literal: a test of
    the format (`fmt == "codex"`, `format in ("claude_code", "codex")`) or a table keyed by it (`{"pi": ...}`)."""
    found = []

    def constants(node: ast.AST) -> list[ast.Constant]:
        if isinstance(node, ast.Constant):
            return [node]
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return [c for e in node.elts for c in constants(e)]
        if isinstance(node, ast.Dict):
            return [c for k in node.keys if k is not None for c in constants(k)]
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("frozenset", "set", "tuple", "list"):
            return [c for a in node.args for c in constants(a)]
        return []

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            operands = [node]
        else:
            continue
        found += [(c.lineno, c.value) for o in operands for c in constants(o) if c.value in names]
    return sorted(set(found))


def test_no_module_outside_core_formats_tests_a_format_s_name():
    names = set(NAMES)
    found = []
    for path in sorted((ROOT / "core").rglob("*.py")) + sorted((ROOT / "app").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("core/formats/"):
            continue
        found += [
            f"{relative}:{line}: {name!r}"
            for line, name in format_name_tests(path.read_text(), names)
            if (relative, name) not in NOT_A_FORMAT
        ]
    assert found == [], "ask the format's declaration (core.formats.registry.format_named) instead"


def test_the_name_test_finds_a_comparison_a_set_and_a_table():
    source = 'a = fmt == "codex"\nb = f in frozenset({"pi"})\nc = {"claude_code": 1}\nd = "codex".upper()\n'
    assert format_name_tests(source, set(NAMES)) == [(1, "codex"), (2, "pi"), (3, "claude_code")]


TOY_LINES = [
    {"toy": "session", "cwd": "/work/toy-project"},
    {"role": "user", "text": "say hello", "at": 1_700_000_000.0},
    {"role": "assistant", "text": "hello", "model": "claude-sonnet-4-5", "at": 1_700_000_001.0, "usage": {"input": 1200, "output": 30}},
    {"role": "user", "text": "again", "at": 1_700_000_002.0},
    {
        "role": "assistant",
        "text": "hello again",
        "model": "claude-sonnet-4-5",
        "at": 1_700_000_003.0,
        "usage": {"input": 1300, "output": 40},
    },
]


def _toy_file(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "first.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in TOY_LINES))
    return path


def test_a_format_added_as_one_module_and_one_entry_opens_with_inspect(tmp_path, monkeypatch, capsys):
    path = _toy_file(tmp_path)
    assert main(["inspect", str(path), "--json"]) == 2  # before its entry, no reader claims the file
    capsys.readouterr()
    monkeypatch.setattr(registry, "FORMATS", registry.FORMATS + [toy_format.SPEC])
    assert main(["inspect", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["format"] == "toy"
    assert out["requests"] == 2
    assert out["messages"] == 4


def test_a_format_added_as_one_module_and_one_entry_lists_its_sessions(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    path = _toy_file(home / ".toy" / "sessions" / "toy-project")
    monkeypatch.setenv("HOME", str(home))
    for spec in registry.FORMATS:
        if spec.sessions is not None:
            monkeypatch.delenv(spec.sessions.env, raising=False)
    monkeypatch.delenv("TOY_HOME", raising=False)
    monkeypatch.setattr(registry, "FORMATS", registry.FORMATS + [toy_format.SPEC])
    assert main(["sessions", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["folders"]["toy"] == str(home / ".toy" / "sessions")
    (row,) = listed["sessions"]
    assert (row["agent"], row["path"], row["project"], row["requests"], row["model"], row["problem"]) == (
        "toy",
        str(path),
        "/work/toy-project",
        2,
        "claude-sonnet-4-5",
        None,
    )
    assert row["start"] == 1_700_000_000.0 and row["cost_usd"] > 0
    moved = tmp_path / "elsewhere"
    monkeypatch.setenv("TOY_HOME", str(moved))
    _toy_file(moved / "sessions" / "p")
    assert main(["sessions", "--json"]) == 0
    assert [r["path"] for r in json.loads(capsys.readouterr().out)["sessions"]] == [str(moved / "sessions" / "p" / "first.jsonl")]
