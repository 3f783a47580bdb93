"""Replay's incremental measure and layout give the rows of measuring and laying out every view whole; the
unseen head joins every replayed request of a session that reported usage."""

from __future__ import annotations

import pytest

from foldscope.core.formats.demo import generate
from foldscope.core.replay.cache_model import Layout
from foldscope.core.replay.lab import HIDDEN_HEAD, Layouts, run_strategy
from foldscope.core.replay.strategies import STRATEGIES
from foldscope.core.request.measure import Measure
from tests.core.replay_sessions import under


class WholeLayouts(Layouts):
    """The reference: every view planned whole, every layout built from scratch, marks found by scanning."""

    def measurement(self, view):
        return self.counter.measure_whole(view, **self.measure.options(view))

    def layout(self, view, marks, at):
        m, total, keys, ends = self.measurement(view), self.head, [], []
        for i, part in enumerate(m.parts):
            total += part.tokens
            keys.append(("head", tuple(x.id for x in view if x.kind == "system")) if i == 0 else part.message.id)
            ends.append(-(-round(total * self.scale, 6) // 1))
        if self.head:
            keys, ends = [HIDDEN_HEAD] + keys, [-(-round(self.head * self.scale, 6) // 1)] + ends
        self._kinds = {x.id: x.kind for x in view}
        self._keys = keys
        return Layout(tuple(keys), tuple(int(e) for e in ends), marks, at)

    def anchors(self):
        notes = [i for i, k in enumerate(self._keys) if self._kinds.get(k) == "note"]
        members = [i for i, k in enumerate(self._keys) if k in self.protected]
        return notes, members


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("head", [0, 5_000])
def test_incremental_replay_rows_equal_the_whole_computation(strategy, head):
    session = generate(rounds=30)
    ceiling = Layouts(Measure(session), head=0).estimate(list(session.record)) // 3
    measure = under(session, ceiling=ceiling, caching=True)
    fast = run_strategy(session, strategy, Layouts(measure, head=head, scale=1.0))
    whole = run_strategy(session, strategy, WholeLayouts(under(session, ceiling=ceiling, caching=True), head=head, scale=1.0))
    assert fast.rows == whole.rows


def test_replay_carries_the_unseen_head_of_a_claude_code_session(corpus_dev):
    from foldscope.core.formats import load_session
    from foldscope.core.request.trace import measure_trace

    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    head = measure_trace(session).unseen_head
    assert head > 10_000 and session.unseen_head == 0
    measure = Layouts(Measure(session))
    assert measure.head == head  # measured as foldscope.core.request.trace measures it
    # `none` sends the recorded views as modelled (recorded's own estimates are the trace's, head and all)
    rows = run_strategy(session, "none", measure).rows
    bare = run_strategy(session, "none", Layouts(Measure(session), head=0)).rows
    assert all(r.estimate >= b.estimate + head for r, b in zip(rows, bare))
    reported = [(r.estimate, t.usage.reported_input) for r, t in zip(rows, session.trace) if t.usage]
    assert max(abs(e - x) / x for e, x in reported) < 0.25  # near what the provider billed


def test_a_rows_plain_data_is_what_dataclasses_asdict_gives():
    from dataclasses import asdict

    session = generate(rounds=12)
    rows = run_strategy(session, "adr", Layouts(under(session, ceiling=20_000, caching=True), head=0, scale=1.0)).rows
    assert rows and all(row.as_dict() == asdict(row) and list(row.as_dict()) == list(asdict(row)) for row in rows)


def test_the_recorded_replay_shows_each_request_at_the_estimate_requests_gives_and_the_reported_peak(corpus_dev, capsys):
    # One size for one request: replay's recorded rows are the requests table's estimates, and its totals name the
    # provider's peak beside the estimated one.
    import json

    from foldscope.core.cli.main import main

    path = corpus_dev / "claude_code" / "session-9eda1058.jsonl"
    assert main(["requests", str(path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["requests"]
    assert main(["replay", str(path), "--strategy", "recorded", "--per-request", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    rows = [r for r in result["rows"] if r["strategy"] == "recorded"]
    assert [r["estimate"] for r in rows] == [r["estimate"] for r in listed]
    (totals,) = result["totals"]
    assert totals["peak"] == max(r["estimate"] for r in listed)
    assert totals["reported_peak"] == max(r["reported_input"] for r in listed if r["reported_input"])


def test_every_strategy_runs_at_the_scale_requests_measures_so_an_unfolded_request_has_one_size(corpus_dev, capsys):
    # Under a ceiling no request reaches, no strategy folds: each sends the recorded views, so each shows the
    # recorded peak (the requests table's largest estimate), not a peak at another scale.
    import json

    from foldscope.core.cli.main import main

    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    assert main(["requests", str(path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["scale"] > 1.0  # a calibrated scale: at the kept scale (1.0) the strategies showed smaller sizes
    assert main(["replay", str(path), "--json"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    assert all(t["folds"] == 0 for t in totals)
    assert {t["peak"] for t in totals} == {max(r["estimate"] for r in listed["requests"])}


def test_the_replay_text_says_to_set_strategies_against_the_modelled_recording_not_the_bill(corpus_dev, capsys):
    from foldscope.core.cli.main import main

    assert main(["replay", str(corpus_dev / "claude_code" / "session-196820da.jsonl"), "--strategy", "recorded,none"]) == 0
    out = capsys.readouterr().out
    assert "set them against recorded's modelled cost" in out and "not its bill" in out
