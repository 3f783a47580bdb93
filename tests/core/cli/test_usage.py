"""`foldscope usage`: the dev corpus's reported usage, summed here straight from the files, grouped and priced."""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from datetime import UTC, datetime

import pytest

from foldscope.core.cli.main import main

CLAUDE = "claude_code/tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
CLAUDE_CHILDREN = ("claude_code/tmp-private/agent-36541525.jsonl", "claude_code/tmp-private/agent-50243ee8.jsonl")
CODEX = (
    "codex/rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl",
    "codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
)


def claude_usage(path) -> list[dict]:
    """Each response's usage as Claude Code wrote it: lines of one message id are one response, its last usage."""
    by_id: dict[str, dict] = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        message = entry.get("message") if isinstance(entry, dict) else None
        if entry.get("type") == "assistant" and isinstance(message, dict) and isinstance(message.get("usage"), dict):
            by_id[message["id"]] = {"usage": message["usage"], "model": message.get("model"), "day": entry["timestamp"][:10]}
    return list(by_id.values())


def claude_sums(responses: list[dict]) -> dict[str, int]:
    return {
        "requests": len(responses),
        "fresh": sum(r["usage"].get("input_tokens", 0) for r in responses),
        "cache_read": sum(r["usage"].get("cache_read_input_tokens", 0) for r in responses),
        "cache_write": sum(r["usage"].get("cache_creation_input_tokens", 0) for r in responses),
        "output": sum(r["usage"].get("output_tokens", 0) for r in responses),
    }


def codex_sums(path) -> dict[str, int]:
    """The rollout's own running total (its last token_count event): input includes the cached part."""
    last = None
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        payload = entry.get("payload") or {}
        if entry.get("type") == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
            last = payload["info"]["total_token_usage"]
    assert last is not None
    return {
        "fresh": last["input_tokens"] - last["cached_input_tokens"],
        "cache_read": last["cached_input_tokens"],
        "cache_write": 0,
        "output": last["output_tokens"],
    }


def _usage(capsys, *argv: str) -> dict:
    assert main(["usage", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_claude_code_session_with_subagents_sums_to_its_files_reported_usage(corpus_dev, capsys):
    responses = [r for name in (CLAUDE, *CLAUDE_CHILDREN) for r in claude_usage(corpus_dev / name)]
    expected = claude_sums(responses)
    out = _usage(capsys, str(corpus_dev / CLAUDE), "--by", "session", "--plain")
    (row,) = out["rows"]
    assert {k: row[k] for k in expected} == expected
    # per model within the session: the subagent's other model apart, each summed from its own responses
    by_model = defaultdict(list)
    for r in responses:
        by_model[r["model"].rsplit("/", 1)[-1]].append(r)
    assert {m: {k: c[k] for k in expected} for m, c in row["models"].items()} == {m: claude_sums(rs) for m, rs in by_model.items()}
    assert len(row["models"]) == 2


def test_a_sessions_cost_is_the_one_inspect_totals(corpus_dev, capsys):
    assert main(["inspect", str(corpus_dev / CLAUDE), "--json"]) == 0
    inspected = json.loads(capsys.readouterr().out)["usage"]["total"]
    out = _usage(capsys, str(corpus_dev / CLAUDE), "--by", "session", "--plain")
    assert out["total"]["cost_usd"] == pytest.approx(inspected["cost_usd"], abs=1e-6)
    assert out["total"]["requests"] == inspected["requests"]


def test_codex_rollouts_sum_to_their_own_running_totals_and_fall_on_their_day(corpus_dev, capsys):
    out = _usage(capsys, *(str(corpus_dev / name) for name in CODEX), "--by", "day", "--plain")
    expected = defaultdict(int)
    for name in CODEX:
        for k, v in codex_sums(corpus_dev / name).items():
            expected[k] += v
    assert {k: out["total"][k] for k in expected} == dict(expected)
    assert [r["day"] for r in out["rows"]] == ["2026-02-23"]
    assert out["rows"][0]["sessions"] == 2


def test_subagent_files_beside_their_session_are_counted_once_in_it(corpus_dev, capsys):
    folder = _usage(capsys, str(corpus_dev / "claude_code" / "tmp-private"), "--by", "session", "--plain")
    alone = _usage(capsys, str(corpus_dev / CLAUDE), "--by", "session", "--plain")
    assert folder["children_in_parents"] == 2
    assert folder["total"] == alone["total"]


def test_days_and_dates_filter_by_each_requests_own_day(corpus_dev, capsys):
    responses = [r for name in (CLAUDE, *CLAUDE_CHILDREN) for r in claude_usage(corpus_dev / name)]
    days = sorted({r["day"] for r in responses})
    out = _usage(capsys, str(corpus_dev / CLAUDE), "--by", "day", "--plain")
    assert [r["day"] for r in out["rows"]] == days
    for row in out["rows"]:
        assert row["output"] == claude_sums([r for r in responses if r["day"] == row["day"]])["output"]
    later = _usage(capsys, str(corpus_dev / CLAUDE), "--since", "2099-01-01", "--plain")
    assert later["rows"] == [] and later["total"]["requests"] == 0


def test_month_groups_add_up_to_the_corpus_total_and_the_foldscope_columns_are_present(corpus_dev, capsys):
    out = _usage(capsys, str(corpus_dev / "claude_code"), str(corpus_dev / "codex"), "--by", "month")
    assert sum(r["requests"] for r in out["rows"]) == out["total"]["requests"]
    assert sum(r["cost_usd"] for r in out["rows"]) == pytest.approx(out["total"]["cost_usd"], abs=1e-5)
    assert out["total"]["wasted_total_usd"] == pytest.approx(sum(out["total"]["wasted_usd"].values()), abs=1e-5)
    # the waste is the cache report's: `cache` on one session gives the same figure
    assert main(["cache", str(corpus_dev / "claude_code" / "session-196820da.jsonl"), "--json"]) == 0
    by_cause = json.loads(capsys.readouterr().out)["totals"]["by_cause"]
    one = _usage(capsys, str(corpus_dev / "claude_code" / "session-196820da.jsonl"), "--by", "session")
    for cause, usd in one["total"]["wasted_usd"].items():
        assert usd == pytest.approx(by_cause[cause]["waste_usd"], abs=1e-5)
    assert one["total"]["wasted_total_usd"] > 0


def test_csv_has_a_line_per_group_and_model_and_a_total(corpus_dev, capsys):
    assert main(["usage", str(corpus_dev / CLAUDE), "--by", "session", "--plain", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["model"] for r in rows] == ["", "claude-sonnet-4-5-20250929", "jp.anthropic.claude-haiku-4-5-20251001-v1:0", ""]
    assert rows[-1]["session"] == "total"
    assert int(rows[0]["requests"]) == int(rows[1]["requests"]) + int(rows[2]["requests"])
    started = datetime.strptime(rows[0]["start"], "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
    assert started.year == 2025


def test_a_bad_date_or_no_sessions_is_one_line(corpus_dev, capsys):
    assert main(["usage", str(corpus_dev / CLAUDE), "--since", "yesterday"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--since" in err
    assert main(["usage"]) == 2
    assert "needs sessions" in capsys.readouterr().err


def test_inspect_and_sessions_say_when_and_where_a_session_ran(corpus_dev, capsys):
    path = corpus_dev / CLAUDE
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    stamps = sorted(
        datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")).timestamp()
        for name in (CLAUDE, *CLAUDE_CHILDREN)
        for e in map(json.loads, (corpus_dev / name).read_text().splitlines())
        if e.get("type") == "assistant"
    )
    assert main(["inspect", str(path), "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)["session"]
    assert facts["start"] <= stamps[0] and facts["end"] == pytest.approx(stamps[-1], abs=1)
    assert facts["project"] == next(e["cwd"] for e in lines if "cwd" in e)
    assert facts["agent_version"] == next(e["version"] for e in lines if "version" in e)
    assert main(["inspect", str(path)]) == 0
    assert f"in {facts['project']}, claude_code {facts['agent_version']}" in capsys.readouterr().out


def test_a_compaction_is_counted_on_its_day_with_the_compaction_reports_net_payback(tmp_path, capsys):
    from foldscope.core.forensics.compactions import compaction_report
    from foldscope.core.formats import load_session
    from foldscope.core.model.launch import session_policy
    from tests.core.forensics.traces import write_claude_code

    path = write_claude_code(tmp_path)  # a compaction before its third request
    session = load_session(path)
    report = compaction_report(session, session_policy(session))
    assert report.compactions
    net = sum(c.payback.saved_usd - c.payback.spent_usd for c in report.compactions if c.payback is not None)
    out = _usage(capsys, str(path), "--by", "session")
    assert out["total"]["compactions"] == len(report.compactions)
    assert out["total"]["payback_net_usd"] == pytest.approx(net, abs=1e-6)
    plain = _usage(capsys, str(path), "--by", "session", "--plain")
    assert "compactions" not in plain["total"] and plain["total"]["cost_usd"] == out["total"]["cost_usd"]


def test_each_model_under_a_group_reads_whole(corpus_dev, capsys):
    """New user 27: by day, a model under a day of several was cut to 24 characters ("claude-sonnet-4-5-2025",
    "jp.anthropic.claude-ha"), silently, so two releases of one model could not be told apart."""
    assert main(["usage", str(corpus_dev / "claude_code")]) == 0
    out = capsys.readouterr().out
    assert "  claude-sonnet-4-5-20250929 " in out and "  jp.anthropic.claude-haiku-4-5-20251001-v1:0 " in out
    head, *rows = out.splitlines()
    column = head.index("sessions") + len("sessions")  # the first figure of every group's and model's row ends under it
    assert all(row[column - 1].isdigit() for row in rows if row.startswith(("2", "  ")))


@pytest.mark.parametrize("command", ["usage", "tune"])
def test_files_named_alone_of_which_none_reads_are_one_line_and_exit_2(command, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a session\n")
    assert main([command, str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"foldscope: {bad}: not a session file") and "\n" not in err


def test_a_folder_whose_files_do_not_read_or_a_good_file_beside_a_bad_one_is_still_summarised(corpus_dev, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a session\n")
    assert main(["usage", str(tmp_path)]) == 0  # a folder: its unreadable files are skips in the summary
    assert "skipped" in capsys.readouterr().out
    assert main(["usage", str(bad), str(corpus_dev / CODEX[0]), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["file"] for s in out["skipped"]] == [str(bad)]


def test_a_row_whose_requests_have_no_price_shows_no_cost_not_zero(corpus_dev, tmp_path, capsys):
    """review8: `usage` over a Cline task at a model no price list names (14 million input tokens) showed $0.0000
    where `sessions` shows "-": a row none of whose requests had a price now shows "-" for its money."""
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
         "message": {"role": "user", "content": "hello"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "timestamp": "2026-01-01T00:00:05Z",
         "message": {"id": "m1", "role": "assistant", "model": "acme-nonesuch-9", "content": [{"type": "text", "text": "hi"}],
                     "usage": {"input_tokens": 5000, "output_tokens": 5, "cache_read_input_tokens": 0,
                               "cache_creation_input_tokens": 0}}},
    ]  # fmt: skip
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "unpriced.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["usage", str(folder / "unpriced.jsonl"), "--plain"]) == 0
    total = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("total"))
    assert total.split()[-1] == "-" and "$" not in total
    priced = corpus_dev / CODEX[1]
    if not priced.exists():
        pytest.skip(f"{priced} is absent")
    (folder / priced.name).write_bytes(priced.read_bytes())
    assert main(["usage", str(folder), "--plain", "--by", "session"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert next(line for line in out if "unpriced.jsonl" in line).split()[-1] == "-"
    assert next(line for line in out if line.startswith("total")).split()[-1].startswith("$")  # the priced ones' sum
    assert "1 request at a model with no price (cost left out)" in out[-1]


def test_a_cost_under_a_hundredth_of_a_cent_is_written_as_sessions_writes_it_never_rounded(capsys):
    """review9: usage wrote a sample's $0.000011 as $0.0000 (and one of $0.00006 as $0.0001), where `sessions` and the
    status line write <$0.0001: one rule for money under a hundredth of a cent (core.readout.words)."""
    from foldscope.core.formats.discover import describe
    from foldscope.core.readout.words import dollars
    from tests.paths import CORPUS

    log = CORPUS / "staged" / "inspect" / "2025-05-12T20-28-13-04-00_popularity.json"
    if not log.exists():
        pytest.skip(f"{log} is absent")
    listed = describe("inspect", log, "1:1")
    assert 0 < listed.cost_usd < 0.0001 and dollars(listed.cost_usd) == "<$0.0001"  # what `sessions` prints for it
    assert main(["usage", str(log), "--by", "session", "--plain"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "--sample 1:1" in line)
    assert row.split()[-1] == "<$0.0001"
    assert [dollars(v) for v in (0.00006, -0.00006, 0.0, 0.0123, -2.5)] == ["<$0.0001", "-<$0.0001", "$0.0000", "$0.0123", "-$2.50"]
    for argv, row in ((["replay", "--strategy", "recorded,none"], "cost_usd"), (["cache"], "bill")):  # the same rule
        assert main([argv[0], str(log), "--sample", "1:1", *argv[1:]]) == 0
        line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(row))
        assert "<$0.0001" in line and "$0.0000" not in line, line
