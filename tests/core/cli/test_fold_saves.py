"""What a folded session's file keeps: the provider's reported figures, the launch record and startup fields
(Amendment 3), and a profile that replaces a stored launch record rather than merging into it."""

from __future__ import annotations

import json
from argparse import Namespace

import pytest

from foldscope.core.cli.main import main
from foldscope.core.cli.options import policy_choice
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import write_demo
from foldscope.core.model.launch import session_policy, store_launch_policy
from foldscope.core.model.policy import Policy
from foldscope.core.request.trace import holds_no_head
from foldscope.core.request.trace_measure import measure_trace

REAL = [
    "claude_code/session-196820da.jsonl",
    "codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
    "pi/pi-mono_large-session.jsonl",
]


def fold_apply(capsys, source, out, *flags) -> dict:
    code = main(["fold", str(source), "--apply", "-o", str(out), "--json", *map(str, flags)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    return json.loads(printed)


@pytest.mark.parametrize("name", REAL)
def test_saving_a_fold_keeps_the_reported_usage_model_source_format_and_unseen_head(corpus_dev, tmp_path, capsys, name):
    source = load_session(corpus_dev / name)
    before = measure_trace(source, Policy(max_input_tokens="none"))
    ceiling = max(r.estimate for r in before.rows) // 2
    result = fold_apply(capsys, corpus_dev / name, tmp_path / "out.json", "--ceiling", ceiling)
    assert result["records"], "the fold ran"
    back = load_session(tmp_path / "out.json")
    assert back.model == source.model
    assert (back.manifest or {}).get("source_format") == source.format and holds_no_head(back)
    assert [r.usage.reported_input if r.usage else None for r in back.trace] == [
        r.usage.reported_input if r.usage else None for r in source.trace
    ]
    again = measure_trace(back, Policy(max_input_tokens="none"))
    assert again.unseen_head == before.unseen_head
    assert again.rows[0].estimate == before.rows[0].estimate  # the same request, the same size
    assert (back.manifest or {}).get("context_folds"), "and the fold's own records"


def test_amendment_3_fold_apply_writes_the_startup_fields_and_the_launch_record(tmp_path, capsys):
    demo = tmp_path / "demo.json"
    write_demo(demo)
    fold_apply(capsys, demo, tmp_path / "out.json", "--ceiling", 20_000, "--result-max", 4_000, "--caching")
    raw = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    manifest = raw["manifest"]
    assert manifest["prompt_caching"] is True
    assert manifest["tool_result_max_chars"] == 4_000
    assert manifest["context_fold"] == {"fold_at": 0.8, "target": 0.6}
    launch = raw["branch"]["metadata"]["api_launch"]
    assert launch["max_input_tokens"] == 20_000 and launch["tool_result_max_chars"] == 4_000
    assert launch["prompt_caching"] is True


def policy_from_args(given: Namespace, session):
    """The policy the CLI resolves for a session from its flags (the launch record, then the profile and flags)."""
    return session_policy(session, policy_choice(given))


def args(profile=None, **flags) -> Namespace:
    base = dict(ceiling=None, fold_at=None, target=None, result_max=None, caching=None, model=None, profile=profile)
    base.update(flags)
    return Namespace(**base)


def stored(policy: Policy):
    session = load_session_demo()
    store_launch_policy(session, policy)
    return session


def load_session_demo():
    from foldscope.core.formats.demo import demo_path

    return load_session(demo_path())


def test_amendment_3_a_profile_replaces_the_stored_launch_record_and_omitted_keys_take_their_defaults(tmp_path):
    session = stored(Policy(max_input_tokens=30_000, tool_result_max_chars=4_000, context_fold_at=0.9, context_fold_target=0.5))
    profile = tmp_path / "profile.yaml"
    profile.write_text("max_input_tokens: 50000\n", encoding="utf-8")
    policy = policy_from_args(args(str(profile)), session)
    assert policy.max_input_tokens == 50_000
    assert policy.tool_result_max_chars is None  # an omitted bound removes the stored one
    assert (policy.fold_at, policy.fold_target) == (0.8, 0.6)  # omitted fractions take their defaults


def test_amendment_3_without_a_profile_the_stored_launch_record_stands():
    session = stored(Policy(max_input_tokens=30_000, tool_result_max_chars=4_000, context_fold_at=0.9, context_fold_target=0.5))
    policy = policy_from_args(args(), session)
    assert (policy.max_input_tokens, policy.tool_result_max_chars, policy.fold_at) == (30_000, 4_000, 0.9)


def test_amendment_3_an_unset_cache_setting_keeps_the_stored_option_and_explicit_false_disables_it(tmp_path):
    session = stored(Policy(max_input_tokens=30_000, prompt_caching=True))
    silent = tmp_path / "silent.yaml"
    silent.write_text("max_input_tokens: 50000\n", encoding="utf-8")
    assert policy_from_args(args(str(silent)), session).caching is True
    off = tmp_path / "off.yaml"
    off.write_text("max_input_tokens: 50000\nprompt_caching: false\n", encoding="utf-8")
    assert policy_from_args(args(str(off)), session).caching is False


def test_a_saved_fold_with_a_rolled_back_stage_reads_back_without_a_rebuilding_warning(capsys, corpus_dev, tmp_path):
    # Reading then writing loses nothing: a stage the fold rolled back left its note in the record, never in the
    # view, and the file's context_folds record says so; the reader replays past views by it.
    out = tmp_path / "folded.json"
    fold_apply(capsys, corpus_dev / "claude_code" / "session-196820da.jsonl", out, "--ceiling", 120_000)
    session = load_session(out)
    folds = session.manifest["context_folds"]
    assert any(f["outcome"] == "rolled_back" for f in folds)  # the case: without it the test proves nothing
    assert not [w for w in session.warnings if "rebuilding past request views" in w], session.warnings
    from foldscope.core.forensics.compactions import compaction_report

    fates = {u.fate for u in compaction_report(session).unsent}
    assert "rolled back" in fates and "pending" in fates
