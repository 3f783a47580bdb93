"""Payback per strategy in the replay lab: each fold against the `none` replay, modelled against modelled."""

from foldscope.core.formats.demo import generate
from foldscope.core.readout.payback_facts import payback_line, strategy_paybacks
from foldscope.core.replay.lab import replay_runs
from tests.core.replay_sessions import under


def test_each_fold_of_a_strategy_pays_back_when_its_own_savings_first_cover_what_it_spent():
    session = generate(rounds=40)
    runs = replay_runs(session, ["none", "band", "compaction"], under(session, 20_000, caching=True))
    paybacks = strategy_paybacks(runs)
    assert set(paybacks) == {"band", "compaction"}
    by = {run.strategy: run for run in runs.runs}
    none = {r.request: r.cost_usd for r in by["none"].rows}
    checked = 0
    for name, folds in paybacks.items():
        rows = [r for r in by[name].rows if r.kind != "summary"]
        costs = {r.request: r.cost_usd for r in rows}
        starts = [r.request for r in rows if r.folds]
        assert [p.request for p in folds] == starts and starts
        for n, p in enumerate(folds):
            summaries = [r.cost_usd for r in by[name].rows if r.kind == "summary" and r.request == p.request]
            assert p.spent_usd == sum(summaries)  # band commits write a brief: nothing spent beyond the rewrite
            end = starts[n + 1] if n + 1 < len(starts) else len(session.trace)
            already = none[p.request - 1] - costs[p.request - 1]
            running = -p.spent_usd
            for k in range(p.request, end):
                running += none[k] - costs[k] - already
                if running >= 0:
                    assert p.requests == k - p.request + 1
                    break
            else:
                assert p.requests is None
            checked += 1
    assert checked >= 2 and any(p.spent_usd > 0 for p in paybacks["compaction"])
    assert payback_line(paybacks["band"]).startswith(("after", "never"))


def test_without_a_none_run_there_is_nothing_to_pay_back_against():
    session = generate(rounds=10)
    runs = replay_runs(session, ["band"], under(session, 20_000, caching=True))
    assert strategy_paybacks(runs) == {}
    assert payback_line([]) == "no folds"
