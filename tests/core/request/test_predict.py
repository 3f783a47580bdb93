"""Predicted input: within a few percent of what the provider reported on real sessions, made only from what was
known before each send, robust to one corrupt figure; and the ADR scale per model."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from foldscope.core.formats import load_session
from foldscope.core.model.session import Message, ReadError, Session
from foldscope.core.readout.accuracy import pooled
from foldscope.core.request.predict import Predictor, Sent, predict_all, predict_next
from foldscope.core.request.trace_measure import measure_trace

CLAUDE = "claude_code/extracted-dd381a75.jsonl"
SONNET = "claude_code/session-196820da.jsonl"
CODEX = "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
SANITISED = "codex/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl"
PI = "pi/pi-mono_large-session.jsonl"
LIMITS = {"claude_code": 0.01, "pi": 0.01, "codex": 0.04}


def corpus(root: Path) -> list[Session]:
    out = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            try:
                out.append(load_session(str(path)))
            except ReadError:
                pass
    return out


# -- the predictor alone --------------------------------------------------------------------------
def test_a_request_is_anchored_on_the_newest_report_of_its_stretch_plus_what_changed_at_the_stretchs_ratio():
    sent = [Sent(10_000), Sent(14_000), Sent(20_000), Sent(21_000)]
    reported = [30_000, 34_800, 41_900, None]  # a 20,000 head, 1.2 tokens per count
    preds, _ = predict_all(sent, reported)
    assert preds[0].anchor is None and preds[0].predicted == 10_000  # no anchor, no head known yet
    assert preds[1].anchor == 0 and preds[1].predicted == 34_000  # one report measures no ratio yet: 1.0
    assert preds[2].anchor == 1 and preds[2].ratio == pytest.approx(1.2)  # two reports 4,000 counted apart
    assert preds[2].predicted == 34_800 + 6_000 * 1.2
    assert preds[3].anchor == 2
    assert preds[3].ratio == pytest.approx((41_900 - 30_000) / 10_000, rel=0.05)
    assert preds[3].predicted == pytest.approx(41_900 + 1_000 * preds[3].ratio, abs=1)


def test_a_prediction_is_its_own_rules_size_of_its_count_and_carries_its_anchors_count_and_report():
    """Each prediction is made once from its rule's fields (anchor, ratio, head, the anchor's count and report), and
    the rule it carries (`size`, which a fold's candidate views are predicted by) gives its own count its size."""
    sent = [Sent(10_000), Sent(14_000), Sent(20_000), Sent(21_000), Sent(5_000, stretch=1)]
    preds, _ = predict_all(sent, [30_000, 34_800, 41_900, None, None])
    assert [p.size(s.count) for p, s in zip(preds, sent)] == [p.predicted for p in preds]
    assert [(p.anchor, p.anchor_count, p.anchor_reported) for p in preds[1:4]] == [
        (0, 10_000, 30_000),
        (1, 14_000, 34_800),
        (2, 20_000, 41_900),
    ]
    assert (preds[0].head, preds[0].anchor_count, preds[4].anchor) == (0, 0, None)
    assert preds[4].head == round(41_900 - 20_000 * preds[3].ratio)  # what the newest anchored report held beyond its count


def test_a_new_stretch_starts_from_the_count_plus_the_head_the_last_anchor_held():
    sent = [Sent(10_000, "m", 0), Sent(20_000, "m", 0), Sent(5_000, "m", 1)]
    preds, _ = predict_all(sent, [30_000, 40_000, None])
    assert preds[2].anchor is None and preds[2].head == 20_000
    assert preds[2].predicted == 25_000 and preds[2].predicted_from == "count"


def test_a_model_change_starts_a_new_stretch():
    preds, _ = predict_all([Sent(10_000, "a"), Sent(11_000, "b")], [30_000, None])
    assert preds[1].anchor is None


def test_a_wild_report_is_flagged_and_not_anchored_on_unless_the_next_one_confirms_it():
    sent = [Sent(10_000), Sent(11_000), Sent(12_000), Sent(13_000), Sent(14_000)]
    preds, flags = predict_all(sent, [20_000, 21_000, 210_000, 23_000, None])  # request 2's report x10
    assert flags[2] and preds[3].anchor == 1 and preds[4].anchor == 3
    predictor = Predictor()
    for k, (s, r) in enumerate(zip(sent, [20_000, 21_000, 60_000, 61_000, None])):  # a real jump, confirmed
        predictor.predict(k, s)
        predictor.report(k, r)
    assert predictor.flagged == [] and predictor.predict(5, Sent(15_000)).anchor in (2, 3)


def test_predict_next_reads_every_report_and_no_later_one():
    sent = [Sent(10_000), Sent(11_000)]
    after = predict_next(sent, [30_000, 31_000], Sent(12_000))
    assert after.anchor == 1 and after.predicted == 32_000
    with pytest.raises(ValueError):
        Predictor().report(0, 5)


# -- on real sessions -----------------------------------------------------------------------------
def test_predicted_input_is_within_one_percent_at_p90_for_claude_code_and_pi_and_four_for_codex(corpus_dev):
    pools = pooled(corpus(corpus_dev))
    assert set(pools) == set(LIMITS)
    for fmt, limit in LIMITS.items():
        a = pools[fmt]
        assert len(a.predicted.values) >= 100, fmt
        assert a.predicted.p90 <= limit, (fmt, a.predicted.p90)
        assert a.paired.p90 <= a.trivial.p90, (fmt, a.paired.p90, a.trivial.p90)  # never worse than the baseline
        assert a.first_predicted.values  # first requests of a stretch are measured, apart


def test_the_sanitised_codex_files_are_predicted_within_four_percent(corpus_dev):
    sanitised = [s for s in corpus(corpus_dev / "codex") if "[REDACTED" in s.record[0].text]
    assert len(sanitised) >= 3
    pools = pooled(sanitised)
    assert pools["codex"].predicted.p90 <= 0.04
    rows = measure_trace(load_session(str(corpus_dev / SANITISED)), prefix=False).rows
    assert all(r.predicted_estimated for r in rows)  # its placeholders stand for text: flagged as estimated


def with_usage(session: Session, change) -> Session:
    session.trace = [replace(r, usage=change(r)) for r in session.trace]
    return session


@pytest.mark.parametrize("name", [CLAUDE, CODEX, PI])
@pytest.mark.parametrize("how", ["changed", "deleted"])
def test_no_hindsight_changing_request_ks_usage_and_every_later_one_moves_no_prediction_up_to_k(corpus_dev, name, how):
    before = measure_trace(load_session(str(corpus_dev / name)), prefix=False).rows
    k = len(before) // 2

    def change(r):
        if r.index < k or r.usage is None:
            return r.usage
        return None if how == "deleted" else replace(r.usage, cache_read=r.usage.cache_read * 3 + 17)

    after = measure_trace(with_usage(load_session(str(corpus_dev / name)), change), prefix=False).rows
    assert [r.predicted for r in after[: k + 1]] == [r.predicted for r in before[: k + 1]]
    assert [r.predicted for r in after[k + 1 :]] != [r.predicted for r in before[k + 1 :]]  # the change was seen


@pytest.mark.parametrize("name", [CLAUDE, SONNET, CODEX, SANITISED, PI])
def test_one_corrupt_usage_figure_mid_session_changes_no_later_prediction_by_more_than_one_percent(corpus_dev, name):
    before = measure_trace(load_session(str(corpus_dev / name)), prefix=False).rows
    k = len(before) // 2

    def corrupt(r):  # the request's largest input figure times ten
        if r.index != k:
            return r.usage
        u = r.usage
        return replace(u, cache_read=u.cache_read * 10) if u.cache_read >= u.input else replace(u, input=u.input * 10)

    spoilt = with_usage(load_session(str(corpus_dev / name)), corrupt)
    report = measure_trace(spoilt, prefix=False)
    after = report.rows
    assert after[k].flagged
    worst = max(abs(a.predicted / b.predicted - 1) for a, b in zip(after[k + 1 :], before[k + 1 :]))
    assert worst <= 0.01, worst
    # A flagged report cannot be true: it raises no scale (which would never fall again), and a warning names it.
    assert after[-1].scale <= before[-1].scale
    assert any(w.startswith(f"request {k}:") and "left out of the scale" in w for w in report.warnings)


def test_each_models_scale_rises_only_from_that_models_requests(corpus_dev):
    session = load_session(str(corpus_dev / CLAUDE))
    n = len(session.trace)
    other = "claude-haiku-4-5-20251001"

    def switched(blow_up: bool) -> list:
        s = load_session(str(corpus_dev / CLAUDE))
        s.trace = [
            replace(r, model=other, usage=replace(r.usage, cache_read=r.usage.cache_read * (5 if blow_up else 1)))
            if n // 3 <= r.index < 2 * n // 3
            else r
            for r in s.trace
        ]
        return measure_trace(s, prefix=False).rows

    calm, wild = switched(False), switched(True)
    own = [r for r in wild if r.model != other]
    assert [r.scale for r in own] == [r.scale for r in calm if r.model != other]  # haiku's reports move no opus scale
    assert max(r.scale for r in wild if r.model == other) > max(r.scale for r in calm if r.model == other)
    first_haiku = next(r for r in wild if r.model == other)
    assert first_haiku.scale == 1.0  # a model switch starts the new model's own scale


def test_the_requests_json_rows_carry_predicted_and_what_it_was_anchored_on(corpus_dev):
    import io
    import json
    from contextlib import redirect_stdout

    from foldscope.core.cli.main import main

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["requests", str(corpus_dev / PI), "--json"]) == 0
    rows = json.loads(out.getvalue())["requests"]
    assert rows[0]["predicted_from"] == "count" and isinstance(rows[5]["predicted_from"], int)
    assert all(isinstance(r["predicted"], int) for r in rows)
    assert {"estimate", "counted", "scale", "reported_input"} <= set(rows[0])


def test_a_placeholders_characters_are_read_once_and_the_same_however_often_a_view_is_counted_again():
    # ProviderCounter keeps a message without a placeholder as itself, one with as (message, characters): the
    # count asked again, in any order, and after another message took a forgotten one's id, is the same.
    from foldscope.core.request.provider_text import ProviderCounter

    plain = Message("p", "instruction", None, {"instruction": "no placeholder here"})
    hidden = Message("h", "instruction", None, {"instruction": "before [REDACTED len=40] after [REDACTED_X len=2]"})
    counter = ProviderCounter()
    first = [counter.memo.hidden_of(m) for m in (plain, hidden, plain, hidden)]
    assert first == [0, 42, 0, 42]
    assert counter.count([plain, hidden], tokens=False).hidden_chars == 42
    assert counter.count([hidden, plain, hidden], tokens=False).hidden_chars == 84
    counter.memo.hidden[id(plain)] = hidden  # another message under plain's id: never taken for plain's own count
    assert counter.memo.hidden_of(plain) == 0
    counter.memo.hidden[id(hidden)] = plain
    assert counter.memo.hidden_of(hidden) == 42


def test_a_plain_messages_placeholder_characters_are_read_again_and_only_calls_and_results_are_kept():
    """ProviderCounter keeps no entry for a prompt or answer without a placeholder (its text is read again: cheaper than
    a million memo entries on a file of tiny lines); a call's text, built from its arguments, is kept."""
    from foldscope.core.request.provider_text import ProviderCounter, provider_text

    view = [
        Message(f"p{i}", kind, None, {"instruction": f"w{i}", "assistant_response": f"a{i}"})
        for i, kind in enumerate(["instruction", "assistant", "note", "instruction"])
    ]
    view.append(Message("h", "assistant", None, {"assistant_response": "x [REDACTED len=7] y"}))
    view.append(Message("c", "action_request", None, {"function": "f", "arguments": {"q": "[REDACTED len=3]"}}))
    counter = ProviderCounter()
    assert counter.count(view, tokens=False).hidden_chars == 10
    assert set(counter.memo.hidden) == {id(view[-2]), id(view[-1])}
    assert [counter.memo.hidden_of(m) for m in view] == [0, 0, 0, 0, 7, 3] and "[REDACTED len=3]" in provider_text(view[-1])
