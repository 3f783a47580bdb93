"""The unseen head split where a --head file or the machine names its parts, adding up to the head the Measure uses.

The --head fixture (fixtures/context_paste.txt) is written in the shape Claude Code's `/context` prints, its sources
named in its first lines.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.formats.context_paste import parse_context
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import ReadError
from foldscope.core.readout import head_split
from foldscope.core.readout.composition import UNSEEN, request_composition
from foldscope.core.readout.head_split import NOT_SPLIT, HeadPart, HeadSources, head_sources, use_head_file
from foldscope.core.request.count import count_text
from foldscope.core.request.measure import Measure

PASTE = Path(__file__).parent / "fixtures" / "context_paste.txt"
# Dev sessions whose requests carry an unseen head: one larger than the fixture's figures, one far smaller (scaled).
HEADED = (
    "claude_code/extracted-dd381a75.jsonl",
    "claude_code/session-196820da.jsonl",
    "pi/earendil-works-pi_personal-assistant_session-sample.EXCERPT.jsonl",
)


@pytest.fixture(autouse=True)
def _no_head_files(monkeypatch):
    monkeypatch.setattr(head_split, "_PASTES", {})  # a --head file given in one test is not another's


@pytest.mark.parametrize("name", HEADED)
def test_the_head_split_adds_up_to_the_unseen_head_on_every_request_of_a_dev_session_with_a_head_file(corpus_dev, name):
    path = corpus_dev / name
    session = load_session(path)
    use_head_file(str(path), PASTE)
    measure = Measure(session, Policy())
    plain = HeadSources()  # the same requests with nothing named: one block
    rows = measure.trace.rows
    assert rows and any(r.unseen_head for r in rows)
    for row in rows:
        split = request_composition(measure, row.index)
        whole = request_composition(measure, row.index, head=plain)
        assert sum(p.tokens for p in split.head_parts) == row.unseen_head == split.unseen_head, (name, row.index)
        assert {p.name for p in split.head_parts} >= {"system prompt", "system tools", "MCP tools", "memory files"}
        # nothing else moves: the request's size, estimate and every other category are the unsplit composition's
        assert (
            (split.size, split.estimate, split.own_count)
            == (whole.size, whole.estimate, whole.own_count)
            == (row.count_with_head, row.estimate, split.own_count)
        )
        assert sum(c.tokens for c in split.parts) == split.size
        others = [(c.name, c.tokens) for c in split.parts if not c.name.startswith(UNSEEN)]
        assert others == [(c.name, c.tokens) for c in whole.parts if c.name != UNSEEN]
        assert sum(c.tokens for c in split.parts if c.name.startswith(UNSEEN)) == row.unseen_head


@given(head=st.integers(0, 2_000_000), figures=st.lists(st.integers(0, 300_000), max_size=7))
def test_a_split_adds_up_to_any_head_and_no_part_exceeds_its_figure(head, figures):
    sources = HeadSources(tuple(HeadPart(f"part {i}", n, "test") for i, n in enumerate(figures)))
    parts = sources.split(head)
    assert sum(p.tokens for p in parts) == head
    assert all(p.tokens >= 0 for p in parts)
    given_ = {f"part {i}": n for i, n in enumerate(figures)}
    assert all(p.tokens <= given_[p.name] for p in parts if p.name != NOT_SPLIT)


def _session_in(corpus_dev: Path, cwd: Path):
    session = load_session(corpus_dev / "claude_code" / "short.jsonl")
    session.extras["cwd"] = str(cwd)
    return session


def test_memory_files_are_found_in_a_fake_project_with_claude_md_and_rules(corpus_dev, tmp_path):
    home, project = tmp_path / "home", tmp_path / "work" / "app"
    (home / ".claude").mkdir(parents=True)
    (project / ".claude" / "rules").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("Answer in British English.\n")
    (tmp_path / "work" / "CLAUDE.md").write_text("# Monorepo\nEvery package is tested with pytest.\n")
    (project / "CLAUDE.md").write_text("# App\nRun `make check` before a commit.\n" * 20)
    (project / ".claude" / "rules" / "style.md").write_text("Format with ruff.\n")
    (project / ".claude" / "rules" / "api.md").write_text("---\npaths: src/api/**\n---\nOnly for the API.\n")  # scoped: not the head
    sources = head_sources(_session_in(corpus_dev, project), home=home)
    memory = next(p for p in sources.parts if p.name == "memory files")
    named = dict(memory.items)
    expected = [
        home / ".claude" / "CLAUDE.md",
        tmp_path / "work" / "CLAUDE.md",
        project / "CLAUDE.md",
        project / ".claude" / "rules" / "style.md",
    ]
    assert set(named) == {str(p) for p in expected}
    assert named[str(project / "CLAUDE.md")] == count_text((project / "CLAUDE.md").read_text())
    assert memory.tokens == sum(count_text(p.read_text()) for p in expected)
    parts = sources.split(25_000)
    assert [p.name for p in parts] == ["memory files", NOT_SPLIT] and sum(p.tokens for p in parts) == 25_000


def test_agents_skills_and_mcp_servers_are_named_from_the_settings(corpus_dev, tmp_path):
    home, project = tmp_path / "home", tmp_path / "app"
    (home / ".claude" / "agents").mkdir(parents=True)
    (project / ".claude" / "skills" / "notes").mkdir(parents=True)
    (home / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a diff for bugs.\n---\nYou review.\n"
    )
    (project / ".claude" / "skills" / "notes" / "SKILL.md").write_text("---\nname: notes\ndescription: Writes release notes.\n---\nBody.\n")
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"tracker": {"command": "tracker-mcp"}}}))
    (home / ".claude.json").write_text("{not json")  # damaged settings are left out, never an error
    sources = head_sources(_session_in(corpus_dev, project), home=home)
    assert {p.name: p.tokens for p in sources.parts} == {
        "custom agents": count_text("- reviewer: Reviews a diff for bugs."),
        "skills": count_text("- notes: Writes release notes."),
    }
    assert sources.named == (f"MCP server tracker ({project / '.mcp.json'})",)
    assert "MCP server tracker" in sources.split(10_000)[-1].source


def test_absent_files_and_settings_leave_the_head_one_block(corpus_dev, tmp_path):
    session = _session_in(corpus_dev, tmp_path / "here")
    (tmp_path / "here").mkdir()
    sources = head_sources(session, home=tmp_path / "nobody")
    assert sources.parts == () and sources.named == ()
    # a session whose folder is not on this machine takes nothing from this user's own setup
    (tmp_path / "me" / ".claude").mkdir(parents=True)
    (tmp_path / "me" / ".claude" / "CLAUDE.md").write_text("My own rules.\n")
    assert head_sources(_session_in(corpus_dev, tmp_path / "gone"), home=tmp_path / "me").parts == ()
    assert head_sources(session, home=tmp_path / "me").parts != ()
    assert [(p.name, p.tokens) for p in sources.split(25_325)] == [(NOT_SPLIT, 25_325)]
    composition = request_composition(Measure(session, Policy()), 0, head=sources)
    assert [c.name for c in composition.parts if c.name.startswith(UNSEEN)] == [UNSEEN]
    assert composition.as_dict()["unseen_head_parts"] == [
        {"name": NOT_SPLIT, "tokens": 25_325, "source": sources.split(1)[0].source, "items": []}
    ]


def test_the_pasted_context_keeps_the_head_categories_and_leaves_messages_free_space_and_deferred_tools():
    paste = parse_context(PASTE.read_text(encoding="utf-8"), "paste.txt")
    assert {c.name: c.tokens for c in paste.categories} == {
        "system prompt": 3_100,
        "system tools": 12_400,
        "MCP tools": 2_200,
        "custom agents": 412,
        "memory files": 1_900,
        "skills": 388,
    }
    assert paste.deferred == 4_800
    memory = next(c for c in paste.categories if c.name == "memory files")
    assert memory.items == [("User (/home/dev/.claude/CLAUDE.md)", 640), ("Project (/home/dev/spotter/CLAUDE.md)", 1_300)]


def test_a_damaged_head_file_is_one_line_naming_the_file_and_line_and_exit_2(corpus_dev, tmp_path, capsys):
    lines = PASTE.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if "System tools:" in line)
    lines[at] = lines[at].replace("12.4k tokens", "twelve tokens")
    bad = tmp_path / "context.txt"
    bad.write_text("\n".join(lines))
    with pytest.raises(ReadError):
        parse_context(bad.read_text(), str(bad))
    for command in ("composition", "inspect"):
        assert main([command, str(corpus_dev / "claude_code" / "short.jsonl"), "--head", str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{bad}: line {at + 1}: " in err and "system tools" in err, err


def test_composition_json_and_inspect_json_carry_the_head_file_parts(corpus_dev, capsys):
    path = corpus_dev / "claude_code" / "short.jsonl"
    assert main(["composition", str(path), "--head", str(PASTE), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    names = [p["name"] for p in printed["parts"]]
    assert "unseen head: memory files" in names and NOT_SPLIT in names and UNSEEN not in names
    assert sum(p["tokens"] for p in printed["unseen_head_parts"]) == printed["unseen_head"]
    assert main(["inspect", str(path), "--head", str(PASTE), "--json"]) == 0
    view = json.loads(capsys.readouterr().out)["view_size"]
    assert sum(p["tokens"] for p in view["unseen_head_parts"]) == view["unseen_head"]
    assert [p["name"] for p in view["unseen_head_parts"]][:2] == ["system prompt", "system tools"]
