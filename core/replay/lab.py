"""The replay lab: a session's trace under several strategies, with the cache model and cost per request."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from foldscope.core.model import pricing
from foldscope.core.model.caching import caching_of
from foldscope.core.model.cost import ModelPrices
from foldscope.core.model.pricing import lookup_prices
from foldscope.core.model.session import Session
from foldscope.core.replay import parallel
from foldscope.core.replay.billed import named_model_line
from foldscope.core.replay.cache_model import CacheRules, Layout, Mark, PrefixCache
from foldscope.core.replay.layouts import Layouts, model_name
from foldscope.core.replay.rows import StrategyRun, make_row, refused_row, summarised
from foldscope.core.replay.strategies import BAND_MAX, BAND_MIN, STRATEGIES, decides_on
from foldscope.core.request import tokens
from foldscope.core.request.estimators import ADR
from foldscope.core.request.measure import Measure

# A progress callback (done, total, label); the GUI worker's Progress.report fits and may raise to cancel.
Report = Callable[[int, int, str], None]


def cache_rules(measure: Measure) -> tuple[CacheRules, str]:
    """Which cache the replay models, and why: caching as core.model.caching decides it, in the words every screen says."""
    caching = caching_of(measure.policy, measure.session, model_name(measure) or "")
    rules = {"marks": CacheRules.anthropic, "automatic": CacheRules.openai, "off": CacheRules.off}[caching.modelled]()
    return rules, caching.words


def _summarised(job: Callable[[], StrategyRun]) -> StrategyRun:
    return summarised(job())


def run_strategy(
    session: Session,
    strategy: str,
    measure: Measure | Layouts,
    prices: ModelPrices | None = None,
    rules: CacheRules | None = None,
    report: Report | None = None,
    keep_views: bool = False,
) -> StrategyRun:
    """Drive one strategy through the trace, modelling each request's cache use and cost.

    `report(done, total, label)` is called after each request when given (total: the recorded requests);
    with `keep_views` the run keeps each row's view, so a reader can show what that request carried."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    measure = measure if isinstance(measure, Layouts) else Layouts(measure)
    rules = rules or cache_rules(measure.measure)[0]
    if prices is None:
        prices = lookup_prices(model_name(measure.measure))
    cache, run = PrefixCache(rules), StrategyRun(strategy, estimator=decides_on(strategy, measure.estimator))
    tail, marked, ceiling = None, rules.mode == "marks", measure.ceiling
    for i, step in enumerate(STRATEGIES[strategy](session, measure)):
        if step.refused:  # nothing is sent: the cache is untouched and nothing is billed
            run.rows.append(refused_row(strategy, i, step, measure))
            if keep_views:
                run.views.append(step.view)
            if report is not None:
                report(step.request + 1, len(session.trace), strategy)
            continue
        keys, ends = measure.laid(step.view, step.measure)
        marks: tuple[Mark, ...] = measure.marks(tail) if marked else ()
        tail = keys[-1] if keys else None
        out = cache.step(Layout(keys, ends, marks, session.trace[step.request].at))  # one Layout a request, marks and all
        run.rows.append(make_row(session, strategy, i, step, out, measure, prices, ceiling))
        if keep_views:
            run.views.append(step.view)
        if report is not None:
            report(step.request + 1, len(session.trace), strategy)
    return run


@dataclass
class ReplayRuns:
    """Every named strategy's run over one session, and what the model, cache and prices were."""

    model: str | None
    priced: bool
    cache_mode: str
    cache_why: str
    settings: dict[str, Any]  # the policy it ran under, and the band's lines
    runs: list[StrategyRun]


# Each strategy's CPU time against the others' on one calibrated measure (bench/bench_replay_scale.py at 10k and 50k
# messages): how core.replay.parallel splits one file's strategies over processes, the heaviest first.
STRATEGY_WEIGHTS = {"adr": 10.0, "compaction": 9.0, "band": 6.5, "none": 3.0, "recorded": 3.0}


# How much lower a strategy child's priority is than the parent's (os.nice): the parent runs the heaviest share, and
# with more processes than cores an equal share of the time would slow it (a 50k Branch's adr, 5.7 s alone, ended
# at 7.1 s beside band and compaction on two cores); so weighted, the scheduler keeps the parent on a core of its own
# and the children share the other, each taking a core once the parent is done. Small enough that other work on the
# machine does not starve them.
CHILD_NICE = 5


def strategy_child() -> None:
    """In a strategy's forked child: let go of the tokenizer's helper (its pipe is the parent's) and step back."""
    tokens.forget_helper()
    try:
        os.nice(CHILD_NICE)
    except OSError:  # not allowed here: the child runs at the parent's priority, only less finely shared
        pass


# The strategies that write notes or summaries, and so count text no trace measure has counted: with a ceiling, each
# builds the tokenizer's encoder in whatever process runs it.
WRITING = frozenset({"adr", "band", "compaction"})


def made_once(session: Session, layouts: Layouts, forked: Sequence[str]) -> None:
    """Before the strategies' children are forked, what each of them would make for itself, made here once and shared
    copy-on-write: the session's arrivals (every strategy reads them), and the tokenizer's encoder where a child will
    count text of its own (a long session under a ceiling; the parent builds it for its own strategy anyway). Where the
    counting child had counted the whole trace, the parent had none at the fork, and each child built its own (about
    0.5 s of CPU each, on the core the children share)."""
    from foldscope.core.request.counting.ahead import CountsAhead

    layouts.arrivals(session)
    if layouts.ceiling and WRITING.intersection(forked) and CountsAhead.worth(session.record):
        tokens.local_encoding()


def replay_runs(
    session: Session,
    strategies: Iterable[str],
    measure: Measure,
    prices: ModelPrices | None = None,
    report: Report | None = None,
    keep_views: bool = False,
    estimator: str = ADR,
    workers: int = 1,
    said: Callable[[str], None] | None = None,
    rows: bool = True,
) -> ReplayRuns:
    """Run every named strategy over one session, sharing one measure; the adr fold decides on `estimator`.

    `report(done, total, label)` counts requests over all strategies, for a progress bar. With `workers` above 1,
    and where a fork is safe (core.replay.parallel.can_fork; never ask for it in the GUI), the strategies run
    in up to that many processes at once after the measure is calibrated, with the same runs as one after another;
    `report` is then called as each strategy's run is in hand, and `said` says a child that failed (its strategies
    then run here). Without `rows` a child's run comes back summarised, its totals without its rows."""
    layouts = Layouts(measure, estimator=estimator)
    rules, why = cache_rules(measure)
    model = model_name(measure)
    if prices is None:
        prices = lookup_prices(model)
    strategies = list(strategies)
    per = len(session.trace)
    total = per * len(strategies)
    # A process a strategy, one more than the workers at most: on two cores three strategies of about equal weight
    # then share the time, all done at 1.5 times one strategy's time, where two processes leave one running two
    # strategies, done at twice. The children run at a lower priority (strategy_child), so the parent's share, the
    # heaviest, keeps a core to itself and is never slowed by them (docs/performance.md, issue 17's fifteenth session).
    processes = min(workers + 1, len(strategies)) if workers > 1 else 1
    # Views are the parent's messages: a child's would come back as copies, so a run that keeps them stays here.
    if processes > 1 and not keep_views and parallel.can_fork():
        jobs = [partial(run_strategy, session, name, layouts, prices, rules) for name in strategies]
        if not rows:  # the rows stay where they were made: only the totals cross the pipe
            jobs = [partial(_summarised, job) for job in jobs]
        groups = parallel.split([STRATEGY_WEIGHTS.get(name, 1.0) for name in strategies], processes)
        made_once(session, layouts, [strategies[i] for group in groups[1:] for i in group])
        finished: list[int] = []

        def done(i: int) -> None:
            finished.append(i)
            if report is not None:
                report(len(finished) * per, total, strategies[i])

        runs = parallel.run_forked(jobs, groups, said=said, done=done, names=strategies, in_child=strategy_child)
        return ReplayRuns(model, prices is not None, rules.mode, why, settings_of(measure, estimator), runs)
    runs = []
    for n, name in enumerate(strategies):
        step = None if report is None else (lambda d, t, label, n=n: report(n * per + d, total, label))
        runs.append(run_strategy(session, name, layouts, prices, rules, step, keep_views))
    return ReplayRuns(model, prices is not None, rules.mode, why, settings_of(measure, estimator), runs)


def settings_of(measure: Measure, estimator: str = ADR) -> dict[str, Any]:
    """What a replay ran under, as its output names it: the policy resolved, the band's lines, and what the
    adr fold decides on."""
    p = measure.policy
    return {
        "ceiling": measure.ceiling,
        "fold_at": p.fold_at,
        "target": p.fold_target,
        "result_max": p.tool_result_max_chars,
        "caching": p.prompt_caching,  # None: left unset, caching as recorded (the cache's `why` says what that models)
        "band_max": BAND_MAX,
        "band_min": BAND_MIN,
        "model": p.model,
        "estimator": estimator,
    }


def replay_warnings(measure: Measure) -> list[str]:
    """What a replay's figures rest on that the user should know, each in one line: a ceiling no request can fit
    under, prices of a model the policy names in place of the file's."""
    return [w for w in (measure.impossible_ceiling(), named_model_line(measure.session, measure.policy)) if w]


def replay(
    session: Session,
    strategies: Iterable[str],
    measure: Measure,
    prices: ModelPrices | None = None,
    report: Report | None = None,
    estimator: str = ADR,
    workers: int = 1,
    said: Callable[[str], None] | None = None,
    rows: bool = True,
) -> dict[str, Any]:
    """Every named strategy over one session: totals side by side, and the rows, as plain data (`workers`, `said`:
    as replay_runs; without `rows` the rows are an empty list, for a caller that shows the totals alone)."""
    out = replay_runs(session, strategies, measure, prices, report, estimator=estimator, workers=workers, said=said, rows=rows)
    found = pricing.resolve(out.model)
    return {
        "model": out.model,
        "priced": out.priced,
        "price_source": found.source if out.priced else None,
        "price_reason": None if out.priced else found.reason,
        "cache": {"mode": out.cache_mode, "why": out.cache_why},
        "settings": out.settings,
        "totals": [r.totals() for r in out.runs],
        "rows": [row.as_dict() for r in out.runs for row in r.rows] if rows else [],
        "warnings": replay_warnings(measure),
    }
