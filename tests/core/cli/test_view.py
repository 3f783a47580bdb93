"""`foldscope view`: its rows are the full record's messages (or the view's), with the index the actions take."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import write_demo
from foldscope.core.readout.document import kind_label
from foldscope.core.readout.opening import build_document


@pytest.fixture
def demo(tmp_path):
    path = tmp_path / "demo.json"
    write_demo(path)
    return path


def view(capsys, *argv) -> dict:
    assert main(["view", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_record_rows_are_every_record_message_in_order_with_its_kind_tokens_and_place(demo, capsys):
    result = view(capsys, demo, "--record")
    session = load_session(demo)
    document = build_document(load_session(demo), str(demo))
    assert [r["index"] for r in result["rows"]] == list(range(len(session.record)))
    for row, message in zip(result["rows"], session.record):
        assert row["in_view"] == (message.id in session.view)
        assert row["kind"] == kind_label(document, row["index"])
        assert row["tokens"] == document.tokens[row["index"]]
        assert row["chars"] == len(message.text)
        assert (row["why_out"] is None) == row["in_view"]
    assert result["view_messages"] == len(session.view) == sum(r["in_view"] for r in result["rows"])


def test_the_default_rows_are_the_active_view_in_its_order_with_record_indices(demo, capsys):
    result = view(capsys, demo)
    session = load_session(demo)
    assert [r["index"] for r in result["rows"]] == [session.record.index_of(m) for m in session.view]
    assert all(r["in_view"] for r in result["rows"])


def test_a_message_folded_into_a_note_says_which_note(capsys, corpus_dev):
    path = corpus_dev / "lionagi" / "branch_v0.36.0_after_context_fold.synthetic.json"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    result = view(capsys, path, "--record")
    session = load_session(path)
    notes = {session.record.index_of(m) for m in session.view if session.record.get(m).kind == "note"}
    reasons = {r["why_out"] for r in result["rows"] if not r["in_view"]}
    assert reasons and None not in reasons
    for row in result["rows"]:
        if row["why_out"] and row["why_out"].startswith("folded into note #"):
            assert int(row["why_out"].removeprefix("folded into note #")) in notes


def test_at_request_lists_the_view_that_request_was_compiled_from(demo, capsys):
    session = load_session(demo)
    k = len(session.trace) // 2
    result = view(capsys, demo, "--at-request", k)
    assert [r["index"] for r in result["rows"]] == [session.record.index_of(m) for m in session.trace[k].view]
    later = view(capsys, demo, "--record", "--at-request", 0)
    assert any(r["why_out"] == "not yet in the record at this request" for r in later["rows"])


def test_at_request_out_of_range_is_one_line(demo, capsys):
    assert main(["view", str(demo), "--at-request", "9999"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--at-request 9999: the session has 13 requests (0 to 12)" in err


def test_kind_keeps_only_the_kinds_named(demo, capsys):
    result = view(capsys, demo, "--record", "--kind", "call,result")
    assert result["rows"] and {r["kind"].split()[0] for r in result["rows"]} <= {"call", "result"}
    everything = view(capsys, demo, "--record")
    assert len(result["rows"]) == sum(r["kind"].split()[0] in ("call", "result") for r in everything["rows"])


def test_an_index_view_lists_is_the_one_evict_takes_and_view_then_says_it_is_out(demo, tmp_path, capsys):
    rows = view(capsys, demo)["rows"]
    target = next(r for r in rows if r["kind"] == "assistant")
    out = tmp_path / "evicted.json"
    assert main(["evict", str(demo), "--index", str(target["index"]), "-o", str(out)]) == 0
    capsys.readouterr()
    after = {r["index"]: r for r in view(capsys, out, "--record")["rows"]}
    assert after[target["index"]]["in_view"] is False
    assert after[target["index"]]["why_out"] == "out of the active view"
    assert after[target["index"]]["preview"] == target["preview"]


def test_the_text_table_has_a_line_per_row_and_the_actions_help_says_where_indices_come_from(demo, capsys):
    assert main(["view", str(demo), "--record"]) == 0
    text = capsys.readouterr().out
    result = view(capsys, demo, "--record")
    assert len(text.splitlines()) == 2 + len(result["rows"])
    for command in ("read-result", "restore", "clip", "evict"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "foldscope view FILE" in " ".join(capsys.readouterr().out.split())
