"""An implicit cache (Gemini CLI, Qwen Code, Codex) explained by its reads: the share read per request, what broke a
read that fell short of the prefix the request before had sent, and no write rows; an explicit one unchanged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from tests.core.formats.test_gemini_cli import COMPRESSED, _sessions, _write, independent_calls
from tests.paths import corpus_glob


def _cache(capsys, *argv: str) -> dict:
    assert main(["cache", *argv, "--json", "--workers", "1"] if Path(argv[0]).is_dir() else ["cache", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _text(capsys, path: Path) -> str:
    assert main(["cache", str(path)]) == 0
    return capsys.readouterr().out


def test_each_gemini_request_reads_the_cached_tokens_the_file_recorded_as_its_share_of_the_input(capsys):
    for path in _sessions():
        out = _cache(capsys, str(path))
        # chatRecordingTypes.ts: `input` is promptTokenCount (cached included), `tool` the tool-use prompt, `cached`
        # the implicit cache's hit (cachedContentTokenCount): the share read is cached over input + tool.
        expected = [None if t is None else (t.get("cached", 0), t["input"] + t.get("tool", 0)) for t in independent_calls(path)]
        got = [
            None if r["reported"] is None else (r["reported"]["cache_read"], r["reported"]["fresh"] + r["reported"]["cache_read"])
            for r in out["requests"]
        ]
        assert got == expected, path
        for r, e in zip(out["requests"], expected):
            if e is not None and e[1]:
                assert r["read"]["share"] == round(e[0] / e[1], 6), path
        assert out["cache_model"] == "implicit"
        assert set(out["totals"]["by_cause"]) == {"fresh", "cache_read", "output"}, "an implicit cache has no write rows"
        assert all("causes" not in r and "cache_write" not in (r["reported"] or {}) for r in out["requests"])


def test_the_real_second_request_falls_short_of_the_first_s_prefix_by_what_it_did_not_read(capsys):
    path = next((p for p in corpus_glob("gemini*/agent-sessions-jsonl_v040.jsonl")), None)
    if path is None:
        pytest.skip("the v0.40 Gemini CLI sample is not in the corpus")
    first, second = independent_calls(path)
    assert first is not None and second is not None
    out = _cache(capsys, str(path))
    read = out["requests"][1]["read"]
    assert read["prefix"] == first["input"]  # the first request's whole prompt is what the second could read
    assert read["short"] == first["input"] - second["cached"]
    assert read["broke"] == {"provider": first["input"] - second["cached"]}  # unchanged, 11 s later: the provider's
    text = _text(capsys, path)
    assert "append" not in text and "first" not in text.split("\n\n")[1], "no write row is printed"
    assert f"{second['cached']:,}" in text and "provider miss" in text


def _call(mid: str, at: str, tokens: tuple[int, int], model: str = "gemini-2.5-pro") -> dict:
    return {
        "id": mid,
        "timestamp": at,
        "type": "gemini",
        "content": f"reply {mid}",
        "model": model,
        "tokens": {"input": tokens[0], "output": 10, "cached": tokens[1], "thoughts": 0, "tool": 0, "total": tokens[0] + 10},
    }


def _user(mid: str, at: str) -> dict:
    return {"id": mid, "timestamp": at, "type": "user", "content": [{"text": f"question {mid} " + "word " * 400}]}


# A chat written as chatRecordingService.ts writes one (see tests/core/formats/test_gemini_cli.py), its calls spaced
# to show each cause: 20 minutes idle, 10 seconds idle, a model switch.
TIMED = [
    {"sessionId": "s2", "projectHash": "abc", "startTime": "2026-05-01T10:00:00.000Z", "kind": "main"},
    _user("u1", "2026-05-01T10:00:01.000Z"),
    _call("g1", "2026-05-01T10:00:02.000Z", (10_000, 0)),
    _user("u2", "2026-05-01T10:20:00.000Z"),
    _call("g2", "2026-05-01T10:20:02.000Z", (11_000, 0)),
    _user("u3", "2026-05-01T10:20:10.000Z"),
    _call("g3", "2026-05-01T10:20:12.000Z", (12_000, 2_000)),
    _user("u4", "2026-05-01T10:20:20.000Z"),
    _call("g4", "2026-05-01T10:20:22.000Z", (13_000, 0), model="gemini-2.5-flash"),
    _user("u5", "2026-05-01T10:20:30.000Z"),
    _call("g5", "2026-05-01T10:20:32.000Z", (14_000, 12_960), model="gemini-2.5-flash"),
]


def test_a_read_short_after_twenty_idle_minutes_is_expired_after_ten_seconds_a_provider_miss_after_a_model_switch_a_rewrite(
    tmp_path, capsys
):
    out = _cache(capsys, str(_write(tmp_path / "session-t.jsonl", TIMED)))
    broke = [r["read"]["broke"] for r in out["requests"]]
    assert broke == [{}, {"expired": 10_000}, {"provider": 9_000}, {"rewrite": 12_000}, {}]
    # g5 read 12,960 of g4's 13,000: less than one 128-token step short, the provider's granularity, no break
    assert out["requests"][3]["read"]["rewrite"]["cause"] == "model"
    reads = out["totals"]["reads"]
    assert reads["broke"] == {"rewrite": 12_000, "expired": 10_000, "provider": 9_000, "unexplained": 0}
    assert (reads["read"], reads["input"], reads["requests_short"]) == (14_960, 60_000, 3)


def test_each_shortfall_s_causes_sum_to_the_prefix_the_request_could_read_less_what_it_read(tmp_path, capsys):
    out = _cache(capsys, str(_write(tmp_path / "session-t.jsonl", TIMED)))
    for r in out["requests"][1:4]:
        assert sum(r["read"]["broke"].values()) == r["read"]["prefix"] - r["reported"]["cache_read"]


def test_a_compaction_breaks_the_read_prefix_as_a_rewrite_at_the_summary(tmp_path, capsys):
    out = _cache(capsys, str(_write(tmp_path / "session-c.jsonl", COMPRESSED)))
    after = out["requests"][3]["read"]
    assert set(after["broke"]) == {"rewrite"}, after
    assert after["rewrite"]["cause"] == "fold"  # the checkpoint's summary replaced the messages before it


def test_an_explicit_cache_keeps_its_write_causes_and_a_folder_sums_both_kinds(tmp_path, capsys):
    claude = corpus_glob("claude_code/short.jsonl")
    if not claude:
        pytest.skip("the dev Claude Code sample is not in the corpus")
    alone = _cache(capsys, str(claude[0]))
    assert "cache_model" not in alone and "causes" in alone["requests"][0]
    assert "first" in alone["totals"]["by_cause"]
    shutil.copy(claude[0], tmp_path / "short.jsonl")
    _write(tmp_path / "session-t.jsonl", TIMED)
    gemini = _cache(capsys, str(tmp_path / "session-t.jsonl"))
    folder = _cache(capsys, str(tmp_path))
    by = folder["totals"]["by_cause"]
    assert by["cache_read"]["tokens"] == alone["totals"]["by_cause"]["cache_read"]["tokens"] + gemini["totals"]["reads"]["read"]
    assert by["first"]["tokens"] == alone["totals"]["by_cause"]["first"]["tokens"]
    assert folder["totals"]["cache_write"] == alone["totals"]["cache_write"]


def test_the_cost_panel_and_the_cache_lane_explain_an_implicit_cache_by_its_reads_not_by_writes(tmp_path):
    from foldscope.core.formats import load_session
    from foldscope.core.readout.cache_lane import lane_rows, lane_sentence
    from foldscope.core.readout.cost_facts import cost_facts, request_sentence

    session = load_session(_write(tmp_path / "session-t.jsonl", TIMED))
    facts = cost_facts(session)
    assert [p.name for p in facts.parts if p.name not in ("subagents", "summariser")] == ["fresh", "cache_read", "output"]
    said = request_sentence(facts.cache.rows[2])
    assert "read 2,000 of its 12,000" in said and "9,000 unchanged and in time" in said and "wrote" not in said
    lane = lane_rows(session)
    assert lane[1].implicit and lane[1].causes == {"expired": 10_000} and lane[1].written == 10_000
    assert "short of the prefix" in lane_sentence(lane[1]) and "stored" not in lane_sentence(lane[1])


def test_the_status_line_of_an_implicit_cache_says_what_a_short_read_missed_never_a_write(tmp_path, monkeypatch, capsys):
    from foldscope.core.cli import statusline

    monkeypatch.setenv("FOLDSCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FOLDSCOPE_STATUSLINE_IDLE", "0")
    path = _write(tmp_path / "session-t.jsonl", TIMED[:9])  # up to g4, the model switch
    assert statusline.main(["--file", str(path), "--no-color"]) == 0
    line = capsys.readouterr().out
    assert "short 12,000 rewrite" in line and "write" not in line.replace("rewrite", "")


def test_a_folder_of_implicit_caches_only_has_no_write_part(tmp_path, capsys):
    _write(tmp_path / "session-t.jsonl", TIMED)
    _write(tmp_path / "session-c.jsonl", COMPRESSED)
    folder = _cache(capsys, str(tmp_path))
    assert list(folder["totals"]["by_cause"]) == ["fresh", "cache_read", "output"]
    assert main(["cache", str(tmp_path), "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "cache read" in text and not any(line.startswith(("first", "append", "provider")) for line in text.splitlines())
