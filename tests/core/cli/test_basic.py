"""The inspect, count and export subcommands, run through foldscope.core.cli.main without a display."""

import io
import json

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.store.library import Library


def run_json(capsys, *argv):
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_inspect_reports_the_demo(capsys):
    session = load_session(demo_path())
    result = run_json(capsys, "inspect", str(demo_path()))
    assert result["format"] == "lionagi" and result["model"] == "anthropic/claude-haiku-5-5"
    assert result["messages"] == len(session.record) == result["record_size"]["messages"]
    assert result["view_size"]["messages"] == len(session.view) < result["messages"]
    assert 0 < result["view_size"]["tokens"] < result["record_size"]["tokens"]
    assert sum(result["by_kind"].values()) == result["messages"]
    assert result["notes"] == 1 and result["folds"] == 1 and result["copies"] == 0
    assert result["requests"] == len(session.trace)
    assert result["peak_reported_input"] == max(r.usage.reported_input for r in session.trace)


def test_inspect_counts_the_records_kinds_in_the_words_view_and_the_lists_use(capsys):
    """review11: inspect said "(16 instruction, 47 assistant, 65 action_request, 65 action_response)" where `view`,
    the lists and the map say call and result, and every table's noun agrees with its count; --json keeps the keys."""
    assert main(["inspect", str(demo_path())]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("full record:"))
    assert line.endswith("(1 system message, 1 instruction, 13 assistant messages, 28 calls, 28 results, 1 note)"), line
    assert main(["inspect", str(demo_path()), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["by_kind"]["action_request"] == 28


def test_inspect_sizes_are_exact_compiled_counts_under_the_launch_policy(capsys):
    from foldscope.core.request.count import Counter

    session = load_session(demo_path())
    result = run_json(capsys, "inspect", str(demo_path()))
    assert result["view_size"]["tokens"] == Counter().count(session.view_messages(), record=session.record)
    assert result["record_size"]["tokens"] == Counter().count(list(session.record), record=session.record)
    policy = result["policy"]
    assert (policy["ceiling"], policy["source"], policy["line"], policy["target"]) == (100_000, "profile", 0.8, 0.6)
    assert "api_launch" in policy["from"]


CONTRACT_KEYS = ("format", "messages", "by_kind", "requests", "view_size", "record_size", "folds", "copies", "notes", "peak_reported_input")


def test_inspect_json_works_on_every_dev_corpus_session(capsys, corpus_dev):
    formats = set()
    for path in sorted(p for p in corpus_dev.rglob("*") if p.is_file()):
        if path.name.startswith("run_manifest"):
            assert main(["inspect", str(path), "--json"]) == 2  # a manifest alone is refused in one line
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "run manifest" in err
            continue
        result = run_json(capsys, "inspect", str(path))
        assert all(key in result for key in CONTRACT_KEYS), path
        assert 0 < result["view_size"]["tokens"] and 0 < result["record_size"]["tokens"]
        formats.add(result["format"])
    assert formats == {"lionagi", "claude_code", "codex", "pi"}


@pytest.mark.parametrize("content", [b"not json\nat all\n", b"", b"\xff\xfe{", b'{"branch": {"messages": 3}}'])
def test_inspect_bad_input_is_one_line_and_exit_2(capsys, tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert main(["inspect", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and str(path) in captured.err


def test_inspect_corpus_fold_sample(capsys, corpus_dev):
    path = corpus_dev / "lionagi" / "branch_v0.36.0_after_context_fold.synthetic.json"
    result = run_json(capsys, "inspect", str(path))
    assert (result["messages"], result["view_size"]["messages"], result["notes"], result["folds"]) == (24, 5, 4, 4)


def test_inspect_text_output_and_library_import(capsys, tmp_path):
    db = tmp_path / "lib.db"
    assert main(["inspect", str(demo_path()), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "full record:" in out and "active view:" in out and "library session: 1" in out
    # its caching line names the setting once (it read "caching: caching as recorded: ...")
    assert "\ncaching as recorded: marks where the file's usage shows cache reads" in out and "caching: caching" not in out
    with Library(db) as library:
        assert len(library.list_sessions()) == 1


def test_count_a_file_and_stdin(capsys, tmp_path, monkeypatch):
    path = tmp_path / "t.txt"
    path.write_text("hello world", encoding="utf-8")
    assert run_json(capsys, "count", str(path)) == {"file": str(path), "tokens": 2, "characters": 11}
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"hello world")))
    assert main(["count", "-"]) == 0
    assert capsys.readouterr().out.strip() == "2"


def test_export_writes_a_native_file_that_reads_back(capsys, tmp_path):
    out = tmp_path / "out.json"
    result = run_json(capsys, "export", str(demo_path()), "-o", str(out))
    assert result["messages"] == len(load_session(out).record)
    assert json.loads(out.read_text()) == json.loads(demo_path().read_text())


def test_export_refuses_to_overwrite_its_input(capsys, tmp_path):
    path = tmp_path / "in.json"
    path.write_bytes(demo_path().read_bytes())
    before = path.read_bytes()
    assert main(["export", str(path), "-o", str(path)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert path.read_bytes() == before


@pytest.mark.parametrize("command", ["inspect", "export"])
def test_bad_input_is_one_line_on_stderr_and_exit_2(capsys, tmp_path, command):
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": {"collections": [{"id": "a", "metadata": {"lion_class": "Nope"}, "content": {}}]}}')
    argv = [command, str(bad), "--format", "lionagi"] + (["-o", str(tmp_path / "o.json")] if command == "export" else [])
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert str(bad) in captured.err and "$.messages.collections[0].metadata.lion_class" in captured.err
    assert not (tmp_path / "o.json").exists()


def test_bad_input_leaves_the_library_untouched(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("not json at all {")
    db = tmp_path / "lib.db"
    assert main(["inspect", str(bad), "--db", str(db)]) == 2
    assert not db.exists() or Library(db).list_sessions() == []


def test_count_refuses_non_utf8(capsys, tmp_path):
    path = tmp_path / "b.bin"
    path.write_bytes(b"ok \xff")
    assert main(["count", str(path)]) == 2
    assert "byte 3: not UTF-8 text" in capsys.readouterr().err


@pytest.mark.parametrize(
    "relative",
    [
        "claude_code/session-196820da.jsonl",
        "claude_code/extracted-dd381a75.jsonl",
        "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
        "pi/pi-mono_large-session.jsonl",
    ],
)
def test_export_of_an_imported_session_keeps_its_requests_and_reported_usage(tmp_path, corpus_dev, relative):
    from foldscope.core.formats import load_session

    source = load_session(corpus_dev / relative)
    out = tmp_path / "exported.json"
    assert main(["export", str(corpus_dev / relative), "-o", str(out)]) == 0
    native = load_session(out)
    assert native.model == source.model
    assert native.view == source.view
    # Every request the provider reported keeps its usage under the same response. (The native
    # trace infers past views from the file, so views after a source compaction may differ.)
    by_response = {r.response_id: r.usage for r in native.trace}
    assert all(by_response.get(r.response_id) == r.usage for r in source.trace if r.usage is not None)
    # The export still holds no system prompt or tools: its requests keep the unseen head.
    from foldscope.core.request.trace_measure import measure_trace

    assert measure_trace(native, prefix=False).unseen_head == measure_trace(source, prefix=False).unseen_head


def test_output_cut_short_by_the_reader_gives_no_traceback():
    # `foldscope requests --json FILE | head -1`: the pipe closes before the output is written.
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-m", "foldscope.core.cli.main", "requests", "--json", str(demo_path())],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 0
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr


def test_amendment_2_the_tool_call_count_excludes_clipped_copies():
    from foldscope.core.actions.commands import Clip
    from foldscope.core.cli.basic import summarise
    from foldscope.core.formats import load_session
    from foldscope.core.formats.demo import demo_path

    session = load_session(demo_path())
    before = summarise(session)["by_kind"]
    index = next(i for i, m in enumerate(session.record) if m.kind == "action_response" and len(m.text) > 500 and m.id in session.view)
    assert Clip(index, 100).do(session).success
    after = summarise(session)
    assert after["by_kind"]["action_response"] == before["action_response"]  # a copy is not an execution
    assert after["by_kind"]["action_request"] == before["action_request"]
    assert after["by_kind"]["clipped_copy"] == after["copies"] == 1
    assert sum(after["by_kind"].values()) == after["messages"]


def test_inspect_json_names_the_model_whether_it_is_priced_and_by_which_source(capsys, corpus_dev, tmp_path):
    codex = corpus_dev / "codex" / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    assert main(["inspect", str(codex), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["model"], out["priced"], out["price_source"], out["price_reason"]) == ("gpt-5.5", True, "genai-prices", None)
    assert main(["inspect", str(demo_path()), "--json"]) == 0  # the spec's own model: the project's table
    out = json.loads(capsys.readouterr().out)
    assert out["model"].endswith("claude-haiku-5-5") and out["priced"] and out["price_source"] == "table"
    fake = tmp_path / "fake.json"
    text = demo_path().read_text(encoding="utf-8").replace("anthropic/claude-haiku-5-5", "acme-nonesuch-9")
    assert "acme-nonesuch-9" in text
    fake.write_text(text, encoding="utf-8")
    assert main(["inspect", str(fake), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "acme-nonesuch-9" and out["priced"] is False and out["price_source"] is None
    assert out["price_reason"] == "no price for model acme-nonesuch-9"


def test_inspect_record_size_is_the_full_record_heading_the_gui_shows_on_every_dev_file(corpus_dev):
    """`inspect` counts the full record as one request without cutting it into parts; the GUI's heading is the total
    of those parts (core.readout.message_sizes.record_sizes): one size for one thing on every screen."""
    from foldscope.core.cli.basic import summarise
    from foldscope.core.model.launch import session_policy
    from foldscope.core.readout.message_sizes import record_sizes
    from foldscope.core.request.measure import Measure

    files = sorted(p for p in corpus_dev.rglob("*") if p.suffix in (".jsonl", ".json") and p.is_file())
    compared = 0
    for path in files:
        try:
            session = load_session(str(path))
        except Exception:  # a run manifest or a file that is not a session: not this test's concern
            continue
        shown = record_sizes(Measure(session, session_policy(session))).total
        assert summarise(session)["record_size"]["tokens"] == shown, path
        compared += 1
    assert compared >= 10
