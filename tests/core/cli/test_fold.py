"""The fold commands through foldscope.core.cli.main: fold, read-result, restore, clip, evict."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli.main import main
from foldscope.core.fold.clip import bodies_of
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import write_demo


@pytest.fixture
def demo(tmp_path):
    path = tmp_path / "demo.json"
    write_demo(path)
    return path


def run(capsys, *argv) -> tuple[int, dict | str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    try:
        return code, json.loads(out), err
    except ValueError:
        return code, out, err


def test_fold_json_on_the_demo_under_20000_shows_the_passes_with_their_records(demo, capsys):
    code, result, _ = run(capsys, "fold", demo, "--ceiling", "20000", "--at-request", "11", "--json")
    assert code == 0
    stages = [r["stage"] for r in result["records"]]
    assert "clip" in stages and result["target_reached"]
    assert result["estimate_after"] <= 12_000 < result["estimate_before"]
    assert any("clipped_from" in row for row in result["view"])


def test_read_result_pages_through_the_omitted_middle_of_the_listing_and_joins_to_the_original(demo, capsys):
    code, result, _ = run(capsys, "fold", demo, "--ceiling", "20000", "--at-request", "11", "--json")
    clip = next(r for r in result["records"] if r["stage"] == "clip")
    index, kept = clip["clipped"][0]["index"], clip["clipped"][0]["kept"]
    original = load_session(demo).record[index]
    body = next(b for b in bodies_of(original) if b.key == "stdout")
    head, tail = 3 * kept // 4, kept - 3 * kept // 4
    start, end = body.offset + head, body.offset + len(body.text) - tail  # the marker's omitted interval
    offset, pages = start, []
    while offset < end:
        limit = min(16_000, end - offset)
        code, page, _ = run(capsys, "read-result", demo, "--index", index, "--offset", offset, "--limit", limit, "--json")
        assert code == 0 and len(page["text"]) == limit
        pages.append(page["text"])
        offset = page["next_offset"]
    assert len(pages) > 1 and "".join(pages) == body.text[head : len(body.text) - tail]


def test_fold_apply_writes_the_folded_session_and_the_source_is_unchanged(demo, tmp_path, capsys):
    before = demo.read_bytes()
    out = tmp_path / "folded.json"
    code, result, _ = run(capsys, "fold", demo, "--ceiling", "20000", "--apply", "-o", out, "--json")
    assert code == 0 and demo.read_bytes() == before
    folded = load_session(out)
    assert len(folded.view) == len(result["view"])
    assert len(folded.manifest["context_folds"]) == 1 + len(result["records"])  # the demo's own fold and ours


def test_clip_restore_and_evict_write_their_output(demo, tmp_path, capsys):
    session = load_session(demo)
    index = next(
        i for i, m in enumerate(session.record) if m.kind == "action_response" and i in {session.record.index_of(v) for v in session.view}
    )
    clipped = tmp_path / "clipped.json"
    code, result, _ = run(capsys, "clip", demo, "--index", index, "--keep", 1_200, "-o", clipped, "--json")
    assert code == 0 and result["success"]
    restored = tmp_path / "restored.json"
    code, result, _ = run(capsys, "restore", clipped, "--index", index, "-o", restored, "--json")
    assert code == 0 and result["restored"] == 1
    assert load_session(restored).view == session.view
    evicted = tmp_path / "evicted.json"
    code, result, _ = run(capsys, "evict", restored, "--index", index, "-o", evicted, "--json")
    assert code == 0 and session.record[index].id not in load_session(evicted).view


def test_a_bad_index_is_one_clear_line_and_a_non_zero_exit(demo, capsys):
    code, out, err = run(capsys, "read-result", demo, "--index", 10_000)
    assert code != 0 and err.count("\n") == 1 and "index 10000" in err and "Traceback" not in err
    code, out, err = run(capsys, "fold", demo, "--ceiling", "20000", "--at-request", "99")
    assert code != 0 and "--at-request 99" in err


def test_fold_with_a_bound_and_caching_keeps_the_first_round_and_says_so(capsys, demo):
    code, out, _ = run(capsys, "fold", demo, "--result-max", 4000, "--caching", "--ceiling", 20_000, "--json")
    assert code == 0 and out["target_reached"] and out["estimate_after"] <= 12_000
    assert out["first_round"]["state"] == "included" and out["first_round"]["bound"] == 4_000
    # Decided by request 1, which carried the task, its answer, the call and the result; the source's own
    # compaction later took the call and result, which the model's own context tool may do (Amendment 4).
    assert out["first_round"]["members"] == [1, 2, 3, 4]
    assert {1, 2} <= {row["index"] for row in out["view"]}
    assert all(r["outcome"] in ("landed", "rolled_back") and r["cap"] == 20_000 for r in out["records"])
    code, text, _ = run(capsys, "fold", demo, "--result-max", 4000, "--caching", "--ceiling", 20_000)
    assert "first round: included" in text


def test_an_action_that_changes_nothing_writes_nothing_and_exits_2(demo, capsys, tmp_path):
    out = tmp_path / "out.json"
    assert main(["evict", str(demo), "--index", "0", "-o", str(out)]) == 2  # the system message never leaves
    assert "changed nothing" in capsys.readouterr().err
    assert not out.exists()


def test_read_result_text_output_says_where_the_page_sits_and_how_to_go_on(demo, capsys):
    session = load_session(demo)
    index = max(range(len(session.record)), key=lambda i: len(session.record[i].text))
    assert main(["read-result", str(demo), "--index", str(index), "--limit", "100"]) == 0
    captured = capsys.readouterr()
    assert main(["read-result", str(demo), "--index", str(index), "--limit", "100", "--json"]) == 0
    total = json.loads(capsys.readouterr().out)["total"]
    assert captured.err.strip() == f"[#{index}: characters 0 to 100 of {total:,}; next: --offset 100]"
    assert len(captured.out.rstrip("\n")) == 100


def test_fold_at_a_recorded_request_names_its_estimator_and_both_ceiling_verdicts(capsys, corpus_dev):
    # pi-mono's request 452 was reported at 177,604 tokens; its estimate (count x scale) is over 200,000. Under a
    # ceiling of 190,000 the estimate is over (the fold core would refuse it) while the provider's count was not.
    path = str(corpus_dev / "pi" / "pi-mono_large-session.jsonl")
    assert main(["fold", path, "--ceiling", "190000", "--at-request", "452", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["estimator"] == "adr"
    assert out["reported_input"] == 177_604 and out["reported_over_ceiling"] is False
    assert out["estimate_before"] >= 190_000 and out["over_ceiling"] is True
    assert main(["fold", path, "--ceiling", "170000", "--at-request", "452", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reported_over_ceiling"] is True
    assert main(["fold", path, "--ceiling", "190000", "--at-request", "452"]) == 0
    text = capsys.readouterr().out
    assert "decides on: the estimate (foldscope's count of the request times the scale" in text and "reported_over_ceiling: no" in text


def test_d4_fold_refuses_a_view_carrying_a_call_without_its_result_and_names_the_call(demo, tmp_path, capsys):
    from foldscope.core.formats.lionagi import write_session

    session = load_session(demo)
    record = session.record
    call = next(record.get(i) for i in session.view if record.get(i).kind == "action_request")
    result = call.content["action_response_id"]
    session.set_view([i for i in session.view if i != result])  # the call stays, its result leaves the view
    path = tmp_path / "unanswered.json"
    write_session(session, path)
    code, out, _ = run(capsys, "fold", path, "--ceiling", "1000000", "--json")
    assert code == 0 and out["records"] == []  # nothing folds
    named = out["refused"]["calls_without_results"]
    assert named == [
        f"the call {call.content['function']} at index {record.index_of(call.id)}, "
        f"its result (index {record.index_of(result)}) not in the view"
    ]


def test_each_pass_line_says_landed_when_it_lowered_the_estimate_and_rolled_back_when_it_did_not(capsys, corpus_dev):
    """New user 27: a pass that did not lower the estimate was "undone (it did not bring the request under the line)",
    beside a kept pass that left the request over the line: the fold lands a pass that lowers the estimate at all."""
    import re

    path = str(corpus_dev / "claude_code" / "session-196820da.jsonl")
    assert main(["fold", path, "--ceiling", "80000"]) == 0  # line 64,000: its first pass lands at 84,520, over it
    passes = re.findall(r"estimate ([\d,]+) -> ([\d,]+), (.+)$", capsys.readouterr().out, re.MULTILINE)
    said = {(int(b.replace(",", "")) > int(a.replace(",", "")), outcome) for b, a, outcome in passes}
    assert said == {(True, "landed"), (False, "rolled back (it did not lower the estimate)")}
    assert any(int(a.replace(",", "")) > 64_000 for _, a, outcome in passes if outcome == "landed")


def test_fold_and_requests_give_one_scale_for_the_same_file_and_flags(corpus_dev, capsys):
    """The scale is calibrated from the file's reported input; fold --json gave it to 4 places (1.0234) where
    requests, inspect and composition give 6 (1.023416): one figure on every screen."""
    path = corpus_dev / "claude_code" / "tool_heavy.jsonl"
    flags = ["--ceiling", "200000", "--result-max", "2000", "--caching", "--json"]
    _, folded, _ = run(capsys, "fold", path, *flags)
    _, requests, _ = run(capsys, "requests", path, *flags)
    assert folded["scale"] == requests["scale"] and folded["scale"] != round(folded["scale"], 4)
