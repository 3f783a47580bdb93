"""`foldscope cache` and `foldscope compactions`: the CLI contract's fields, a folder equal to its files, bad input."""

import json

from foldscope.core.cli.main import main
from tests.core.forensics.traces import write_claude_code

REQUEST_KEYS = {"index", "reported", "causes", "gap_s", "cost_usd"}
COMPACTION_KEYS = {
    "request",
    "kind",
    "before",
    "after",
    "summariser_cost_usd",
    "dropped",
    "literals",
    "refetched",
    "rewrite_cost_usd",
    "payback_requests",
}
FILES = (
    "claude_code/session-196820da.jsonl",
    "claude_code/extracted-dd381a75.jsonl",
    "claude_code/tool_heavy.jsonl",
    "pi/earendil-works-pi_prompt-cache-replay-session.jsonl",
)


def run_json(capsys, *argv) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cache_prints_each_request_with_causes_summing_to_its_cache_write(capsys, corpus_dev):
    out = run_json(capsys, "cache", str(corpus_dev / FILES[0]))
    assert out["requests"] and all(REQUEST_KEYS <= set(r) for r in out["requests"])
    for r in out["requests"]:
        assert sum(r["causes"].values()) == r["reported"]["cache_write"]
        assert set(r["reported"]) >= {"fresh", "cache_read", "cache_write"}
        assert set(r["cost_usd"]) >= {"fresh", "cache_read", "output"} | set(r["causes"])
    assert out["totals"]["cache_write"] == sum(r["reported"]["cache_write"] for r in out["requests"])
    assert all({"tokens", "cost_usd"} <= set(cell) for cell in out["totals"]["by_cause"].values())


def test_compactions_prints_each_compaction_with_the_contracts_fields(capsys, tmp_path):
    out = run_json(capsys, "compactions", str(write_claude_code(tmp_path)))
    assert len(out["compactions"]) == 1
    c = out["compactions"][0]
    assert COMPACTION_KEYS <= set(c) and c["kind"] == "compaction"
    assert c["before"] == 12606  # the file's compactMetadata.preTokens
    assert c["summariser_cost_usd"] > 0 and "agent-acompact" in c["summariser_why"]
    assert {"kept", "lost", "lost_list"} <= set(c["literals"]) and c["literals"]["lost"] == len(c["literals"]["lost_list"])
    assert c["dropped"]["messages"] > 0 and c["rewrite_cost_usd"] is not None


def test_a_folder_gives_one_row_per_session_equal_to_each_file_and_totals(capsys, corpus_dev, tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in FILES:
        (folder / name.split("/")[1]).symlink_to(corpus_dev / name)
    write_claude_code(folder)  # S1.jsonl, and its summariser in the folder S1/subagents/, which a folder run skips
    (folder / "broken.jsonl").write_text("{not json\n", encoding="utf-8")
    for command in ("cache", "compactions"):
        out = run_json(capsys, command, str(folder), "--workers", "2")
        assert out["sessions"] == len(FILES) + 1 and [s["file"] for s in out["skipped"]] == [str(folder / "broken.jsonl")]
        rows = {r["file"]: r for r in out["table"]}
        for name in (*FILES, "fixture/S1.jsonl"):
            path = folder / name.split("/")[1]
            alone = run_json(capsys, command, str(path))
            assert rows[str(path)]["totals"] == alone["totals"]
            if command == "compactions":
                assert rows[str(path)]["compactions"] == alone["compactions"]
        if command == "cache":
            by = out["totals"]["by_cause"]
            assert all(by[p]["tokens"] == sum(r["totals"]["by_cause"][p]["tokens"] for r in out["table"]) for p in by)
            assert out["totals"]["cache_write"] == sum(r["totals"]["cache_write"] for r in out["table"])
        else:
            assert out["totals"]["compactions"] == sum(len(r["compactions"]) for r in out["table"]) >= 1


def test_text_output_and_bad_input_get_one_line(capsys, corpus_dev, tmp_path):
    assert main(["cache", str(corpus_dev / FILES[0])]) == 0
    text = capsys.readouterr().out
    assert "provider" in text and "bill" in text
    assert main(["compactions", str(write_claude_code(tmp_path))]) == 0
    assert "before request 2 (compaction)" in capsys.readouterr().out
    for command in ("cache", "compactions"):
        assert main([command, str(tmp_path / "missing.jsonl")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "missing.jsonl" in err
