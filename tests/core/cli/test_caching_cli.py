"""`--caching` and `--profile caching.yaml` place marks and change no other figure the commands print (issue 41)."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli import main as cli
from foldscope.core.request.marks import MAX_MARKS, ONE_HOUR, mark_text
from foldscope.core.request.tokens import count_text

SESSION = "claude_code/session-196820da.jsonl"


def run_json(capsys, *argv: str) -> dict:
    code = cli.main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


# The most a request's marks add to its count: four marks, each at most the one-hour mark's text.
MARKS_AT_MOST = MAX_MARKS * count_text(mark_text(ONE_HOUR))


@pytest.mark.parametrize("policy", [[], ["--profile", "caching.yaml"]], ids=["flag", "profile"])
def test_requests_with_caching_flags_what_caching_off_flags_and_counts_only_the_marks_more(capsys, corpus_dev, policy):
    """The README's profile turns caching on beside a result bound: compared with the same profile and --no-caching."""
    path = str(corpus_dev / SESSION)
    off = run_json(capsys, "requests", path, *policy, "--no-caching", "--ceiling", "130000")
    on = run_json(capsys, "requests", path, *policy, "--caching", "--ceiling", "130000")
    assert len(on["requests"]) == len(off["requests"]) > 1
    for a, b in zip(on["requests"], off["requests"]):
        assert a["over_ceiling"] == b["over_ceiling"] and a["reported_over_ceiling"] == b["reported_over_ceiling"]
        assert 0 <= a["counted"] - b["counted"] <= MARKS_AT_MOST, a["index"]
    assert any(r["over_ceiling"] for r in off["requests"]) and not all(r["over_ceiling"] for r in off["requests"])
    assert abs(on["unseen_head"] - off["unseen_head"]) <= MARKS_AT_MOST
    assert on["scale"] == pytest.approx(off["scale"], rel=0.005)


def test_composition_with_caching_charges_each_tool_its_own_results(capsys, corpus_dev):
    """The envelope charged a round's results to its first one (a 75-character Write result shown as thousands of
    tokens): with caching on every group but the head and the framing is caching off's, to the token."""
    path = str(corpus_dev / SESSION)
    off = run_json(capsys, "composition", path, "--at-request", "largest", "--no-caching")
    on = run_json(capsys, "composition", path, "--at-request", "largest", "--caching")
    assert on["request"] == off["request"]
    groups = lambda result: {p["name"]: p["tokens"] for p in result["parts"] if p["name"] not in ("unseen head", "framing")}  # noqa: E731
    assert groups(on) == groups(off) and "results: Write" in groups(on)
    assert on["top"][1:] == off["top"][1:]  # the first is the unseen head, which the marks' tokens move


@pytest.mark.parametrize("flag", ["--caching", "--no-caching"])
def test_caching_given_for_a_provider_that_caches_by_itself_says_in_one_line_it_does_not_apply(capsys, corpus_dev, flag):
    """A Codex session (gpt-5.3-codex, OpenAI's automatic cache: its file reports reads and no writes): the replay
    models the provider's own cache whatever the flag says, and names the flag it set aside; unset, no such words."""
    path = str(corpus_dev / "codex" / "rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl")
    said = run_json(capsys, "replay", path, "--strategy", "recorded", flag)["cache"]
    assert said["mode"] == "automatic"
    assert said["why"].endswith(
        f"; prompt_caching {'true' if flag == '--caching' else 'false'} does not apply to it (it caches by itself, without marks)"
    )
    assert "does not apply" not in run_json(capsys, "replay", path, "--strategy", "recorded")["cache"]["why"]
