"""A request's composition: its categories add up to the count the trace measured, in every format, with marks or without."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session
from foldscope.core.readout.composition import RESULTS, MessageFacts, _category_totals, bar_figures, request_composition
from foldscope.core.readout.head_split import sources_for
from foldscope.core.request.measure import Measure
from foldscope.core.request.trace_measure import measure_trace
from tests.core.live_sessions import append, assistant, result, user


def _files(corpus: Path) -> list[Path]:
    files = [
        sorted((corpus / name).glob(pattern))[:3]
        for name, pattern in (("claude_code", "*.jsonl"), ("codex", "*.jsonl"), ("pi", "*.jsonl"), ("lionagi", "*branch*.json"))
    ]
    assert all(files)
    return [f for group in files for f in group]


def _compositions(session: Session, policy: Policy):
    report = measure_trace(session, policy)  # measured apart from the Measure: the two must agree
    measure = Measure(session, policy)
    for row in report.rows:
        yield row, request_composition(measure, row.index)


@pytest.mark.parametrize("caching", [False, True])
def test_the_parts_of_every_request_add_up_to_the_count_the_trace_measured(corpus_dev, caching):
    for path in _files(corpus_dev):
        session = load_session(path)
        policy = Policy(prompt_caching=caching, max_input_tokens=200_000 if caching else None)
        for row, composition in _compositions(session, policy):
            assert sum(c.tokens for c in composition.parts) == composition.size == row.count_with_head, (path.name, row.index)
            assert sum(g.tokens for g in composition.groups) == row.count_with_head, (path.name, row.index)
            assert composition.estimate == row.estimate, (path.name, row.index)


def test_every_request_composed_with_shared_facts_and_no_details_has_the_categories_of_its_whole_composition(corpus_dev):
    # The report's bar per request (one MessageFacts for all, no groups or repeats) shows what the composition shows.
    for path in _files(corpus_dev):
        session = load_session(path)
        measure, facts = Measure(session, Policy()), MessageFacts()
        for row in measure.trace.rows:
            whole = request_composition(measure, row.index)
            bar = request_composition(measure, row.index, facts=facts, details=False)
            assert bar.parts == whole.parts and bar.thinking_in_file == whole.thinking_in_file, (path.name, row.index)
            assert (bar.size, bar.estimate, bar.predicted) == (whole.size, whole.estimate, whole.predicted)
            assert bar.groups == bar.repeats == () and whole.groups


def test_a_bars_figures_are_its_compositions_categories_in_order_with_its_size(corpus_dev):
    # The report's every-request table draws each bar from bar_figures (no Composition made): the same names and
    # tokens in the same order (the head, the unseen head's parts, the kinds, thinking, the results largest first...).
    kinds: dict = {}
    for path in _files(corpus_dev):
        session = load_session(path)
        measure, head = Measure(session, Policy()), sources_for(session)
        for row in measure.trace.rows:
            whole = request_composition(measure, row.index, head=head)
            parts = measure.request_parts(row.index)
            figures, size = bar_figures(parts, _category_totals(parts, MessageFacts()), head.split(parts.unseen_head), kinds)
            assert figures == [(p.name, p.tokens) for p in whole.parts] and size == whole.size, (path.name, row.index)


def test_compositions_sharing_facts_in_any_order_have_the_categories_each_has_alone(corpus_dev):
    # Shared facts go on from the request composed before (its categories less what this one does not share): in
    # reverse and shuffled order most of each view is taken out, and the categories keep their order of appearance.
    import random

    for path in _files(corpus_dev):
        session = load_session(path)
        measure, facts = Measure(session, Policy()), MessageFacts()
        order = [row.index for row in measure.trace.rows]
        order = order[::-1] + random.Random(7).sample(order, len(order))
        for k in order:
            whole = request_composition(measure, k)
            bar = request_composition(measure, k, facts=facts, details=False)
            assert bar.parts == whole.parts and bar.thinking_in_file == whole.thinking_in_file, (path.name, k)


def test_the_unseen_head_is_a_part_where_the_file_holds_no_system_prompt(corpus_dev):
    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    report = measure_trace(session, Policy())
    row = report.rows[-1]
    composition = request_composition(Measure(session, Policy()), row.index)
    parts = {c.name: c.tokens for c in composition.parts}
    assert parts["unseen head"] == composition.unseen_head > 0
    # The unseen head is what the provider reported past the count of the file's messages, never more.
    assert composition.size <= row.reported_input


def _reads(tmp_path: Path) -> Session:
    """A file read three times (twice with the same content), a command run once: in the Claude Code shape."""
    path = tmp_path / "reads.jsonl"
    body = "def main():\n    return 1\n" * 200
    lines = [user(0, "look at the app")]
    for n, (call, name, args, output) in enumerate(
        [
            ("t1", "Read", {"file_path": "src/app.py"}, body),
            ("t2", "Bash", {"command": "ls -la"}, "total 0\n"),
            ("t3", "Read", {"file_path": "src/app.py"}, body),
            ("t4", "Read", {"file_path": "src/app.py"}, body + "# changed\n"),
        ],
        start=1,
    ):
        lines += [assistant(n, f"step {n}", tool=(call, name, args)), result(n, call, output)]
    lines += [assistant(9, "done")]
    append(path, lines)
    return load_session(path)


def test_results_group_by_tool_and_path_and_the_repeats_say_what_they_cost(tmp_path):
    session = _reads(tmp_path)
    row = measure_trace(session, Policy()).rows[-1]
    composition = request_composition(Measure(session, Policy()), row.index)
    assert composition.size == row.count_with_head
    reads = [g for g in composition.groups if g.category == RESULTS and g.tool == "Read"]
    assert [(g.target, g.times) for g in reads] == [("src/app.py", 3)]
    assert composition.top(1)[0] is reads[0]  # the largest thing in the request
    same = [r for r in composition.repeats if r.why == "same content" and r.label.startswith("results: Read")]
    assert len(same) == 1 and same[0].times == 2
    assert same[0].repeat_tokens * 2 == same[0].tokens  # carrying it once saves one of two equal copies
    parts = {c.name: c.tokens for c in composition.parts}
    assert parts[f"{RESULTS}: Read"] == reads[0].tokens


def test_foldscope_composition_prints_the_same_parts(corpus_dev, capsys):
    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    session = load_session(path)
    report = measure_trace(session, Policy())
    assert main(["composition", str(path), "--at-request", "5", "--top", "3", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    row = report.rows[5]
    expected = request_composition(Measure(session, Policy()), 5).as_dict(3)
    assert printed["parts"] == expected["parts"]
    assert sum(p["tokens"] for p in printed["parts"]) == printed["size"] == row.count_with_head
    assert [g["tokens"] for g in printed["top"]] == sorted((g["tokens"] for g in printed["top"]), reverse=True)
    assert len(printed["top"]) == 3


def test_foldscope_composition_refuses_a_request_that_is_not_there(corpus_dev, capsys):
    path = corpus_dev / "claude_code" / "short.jsonl"
    assert main(["composition", str(path), "--at-request", "99"]) == 2
    err = capsys.readouterr().err
    assert "--at-request 99" in err and err.count("\n") == 1


def test_the_text_output_carries_no_control_characters(tmp_path, capsys):
    path = tmp_path / "hostile.jsonl"
    append(
        path,
        [
            user(0, "hi"),
            assistant(1, "x", tool=("t1", "Bash", {"command": "echo \x1b[31mred\x07"})),
            result(1, "t1", "red"),
            assistant(2, "done"),
        ],
    )
    assert main(["composition", str(path), "--at-request", "1"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\\x1b[31mred" in out


def test_the_next_request_is_composed_from_the_active_view_with_the_head_it_will_carry(corpus_dev):
    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    measure = Measure(session, Policy())
    measure.calibrate()
    composition = request_composition(measure, None)
    messages = measure.messages(session.view)
    assert composition.size == measure.count_with_head(messages) == sum(c.tokens for c in composition.parts)
    assert composition.estimate == measure.estimate(messages) and composition.unseen_head == session.unseen_head > 0
