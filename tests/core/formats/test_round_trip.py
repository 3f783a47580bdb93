"""What foldscope writes, it reads back silently and identically: on every dev file, after an export, a fold, a clip,
a restore and an evict, every figure `inspect --json` prints of the session written equals the one it printed of the
session before the write, and reading it back says no warning the session itself did not have (issue 41, finding 8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.actions.commands import ApplyFold, Clip, Evict, Restore
from foldscope.core.cli.basic import summarise
from foldscope.core.cli.main import main
from foldscope.core.fold.fold import Fold
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.formats.lionagi_write import write_session
from foldscope.core.model.launch import session_policy, to_save
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import NotASession, Session
from foldscope.core.request.measure import Measure
from tests.paths import CORPUS_DEV

DEV = (
    sorted(str(p.relative_to(CORPUS_DEV)) for p in CORPUS_DEV.rglob("*") if p.suffix in (".json", ".jsonl")) if CORPUS_DEV.is_dir() else []
)
ACTIONS = ("export", "fold", "clip", "restore", "evict")


def open_dev(corpus_dev: Path, name: str) -> Session:
    try:
        return load_session(corpus_dev / name)
    except NotASession:
        pytest.skip(f"{name} is a run manifest, not a session")


def figures(result: dict[str, Any]) -> dict[str, Any]:
    """What inspect --json prints, less where the session was read from and its warnings (compared apart)."""
    out = {k: v for k, v in result.items() if k not in ("file", "format", "warnings")}
    # where the launch record was read from is named by the file's path
    out["policy"] = {k: v.replace(str(result["file"]), "FILE") if isinstance(v, str) else v for k, v in out["policy"].items()}
    # the agent, project and version are the source file's (a native file names none); its wall times stay
    out["session"] = {k: v for k, v in out["session"].items() if k in ("start", "end", "duration_s")}
    return out


def largest_result(session: Session, in_view: bool) -> int | None:
    view = set(session.view)
    record = session.record
    results = [i for i, m in enumerate(record) if m.kind == "action_response" and not m.is_clipped_copy and (m.id in view) == in_view]
    return max(results, key=lambda i: len(record[i].text), default=None)


def fold(session: Session) -> bool:
    """The GUI's Apply fold under a ceiling of half the largest request (ADR-0130): whether anything landed."""
    sizes = Measure(session, Policy(max_input_tokens="none")).calibrate(prefix=False).rows
    if not sizes:
        return False
    policy = Policy(max_input_tokens=max(max(r.estimate for r in sizes) // 2, 1000))
    action = ApplyFold(Fold(session, Measure(session, policy)))
    return action.do(session).success and bool(action.run and action.run.landed)


def act(session: Session, action: str) -> bool:
    """Do `action` on the session as the GUI and the CLI do it; False when the file gives it nothing to act on."""
    if action == "export":
        return True
    if action == "fold":
        return fold(session)
    if action == "restore":
        # a fold takes results out of the view; where it lands nothing, an evict takes one out to restore
        if not fold(session) and (taken := largest_result(session, in_view=True)) is not None:
            Evict([taken]).do(session)
        index = largest_result(session, in_view=False)
        return index is not None and Restore([index]).do(session).success
    index = largest_result(session, in_view=True)
    if index is None:
        return False
    if action == "clip":
        keep = len(session.record[index].text) // 4
        return keep > 0 and Clip(index, keep).do(session).success
    return Evict([index]).do(session).success


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("name", DEV)
def test_what_foldscope_writes_reads_back_silently_with_every_figure_inspect_prints(corpus_dev, tmp_path, name, action):
    session = open_dev(corpus_dev, name)
    if not act(session, action):
        pytest.skip(f"{name}: nothing to {action}")
    saved = to_save(session, session_policy(session))  # what Save writes: the launch record and startup fields
    before = summarise(saved)
    write_session(saved, tmp_path / "out.json")
    back = load_session(tmp_path / "out.json")
    after = summarise(back)
    assert figures(after) == figures(before)
    assert [w for w in back.warnings if w not in session.warnings] == []
    assert [r.view for r in back.trace] == [r.view for r in saved.trace]  # and the views those figures come from


CLI_ACTIONS = {
    "fold": ["fold", "--apply", "--ceiling", "CEILING"],
    "clip": ["clip", "--index", "IN", "--keep", "KEEP"],
    "restore": ["restore", "--index", "OUT"],
    "evict": ["evict", "--index", "IN"],
    "export": ["export"],
}


@pytest.mark.parametrize("action", CLI_ACTIONS)
@pytest.mark.parametrize(
    "name",
    [
        "claude_code/extracted-dd381a75.jsonl",
        "claude_code/session-9eda1058.jsonl",
        "claude_code/tool_heavy.jsonl",
        "codex/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl",
        "lionagi/branch_v0.36.0_after_context_fold.synthetic.json",
    ],
)
def test_a_file_the_cli_wrote_is_inspected_without_a_warning_and_exports_unchanged(corpus_dev, tmp_path, capsys, name, action):
    """fold --apply, clip, restore, evict and export, each to -o OUT; then inspect OUT says nothing the source did
    not, and OUT exported again prints the same figures (the second write is the first)."""
    source = corpus_dev / name
    session = load_session(source)
    fold_first = action == "restore"
    if fold_first:  # restore brings back what the fold took out
        assert main(["fold", str(source), "--apply", "--ceiling", str(ceiling(session)), "-o", str(tmp_path / "f.json")]) == 0
        source, session = tmp_path / "f.json", load_session(tmp_path / "f.json")
    out = tmp_path / "out.json"
    inside, outside = largest_result(session, True), largest_result(session, False)
    keep = len(session.record[inside].text) // 4 if inside is not None else 0
    words = [
        w.replace("CEILING", str(ceiling(session))).replace("IN", str(inside)).replace("OUT", str(outside)).replace("KEEP", str(keep))
        for w in CLI_ACTIONS[action]
    ]
    capsys.readouterr()
    assert main([words[0], str(source), *words[1:], "-o", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["inspect", str(out), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert [w for w in first["warnings"] if w not in load_session(corpus_dev / name).warnings] == []
    assert main(["export", str(out), "-o", str(tmp_path / "again.json")]) == 0
    capsys.readouterr()
    assert main(["inspect", str(tmp_path / "again.json"), "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert figures(second) == figures(first) and second["warnings"] == first["warnings"]


def ceiling(session: Session) -> int:
    rows = Measure(session, Policy(max_input_tokens="none")).calibrate(prefix=False).rows
    return max(max(r.estimate for r in rows) // 2, 1000)


def test_a_sessions_subagents_are_written_with_their_links_and_read_back_with_their_requests(corpus_dev, tmp_path):
    name = "claude_code/tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
    session = open_dev(corpus_dev, name)
    assert session.children  # the case: a parent with subagent files beside it
    write_session(session, tmp_path / "out.json")
    back = load_session(tmp_path / "out.json")
    links = ("agent_id", "child_kind", "parent_call", "source")
    assert [(c.extras.get("agent_id"), c.extras.get("child_kind"), c.extras.get("parent_call"), c.source) for c in back.children] == [
        (c.extras.get("agent_id"), c.extras.get("child_kind"), c.extras.get("parent_call"), c.source) for c in session.children
    ], links
    assert [[(r.usage, r.model, r.at) for r in c.trace] for c in back.children] == [
        [(r.usage, r.model, r.at) for r in c.trace] for c in session.children
    ]
    again = tmp_path / "again.json"
    write_session(back, again)
    assert again.read_bytes() == (tmp_path / "out.json").read_bytes()  # the second write is the first


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.tuples(st.sampled_from(["restore", "evict", "clip"]), st.integers(0, 59)), max_size=6))
def test_after_any_actions_the_demo_reads_back_with_the_same_views_and_no_warning(tmp_path_factory, steps):
    session = load_session(demo_path())
    for action, index in steps:
        if action == "clip":
            Clip(index, 100, into_view=True).do(session)
        else:
            (Restore if action == "restore" else Evict)([index]).do(session)
    out = tmp_path_factory.mktemp("any") / "out.json"
    write_session(session, out)
    back = load_session(out)
    assert back.warnings == []
    assert back.view == session.view and [r.view for r in back.trace] == [r.view for r in session.trace]
    assert [r.usage for r in back.trace] == [r.usage for r in session.trace]
