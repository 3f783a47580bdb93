"""What a session's cache report keeps a request, held by the window for the session's life (issue 48)."""

from __future__ import annotations

import gc
import tracemalloc
from dataclasses import replace

from foldscope.core.forensics.cache_report import cache_report, totals_of
from foldscope.core.forensics.cause_prices import READ_INSTEAD
from foldscope.core.forensics.trace_pass import measure_requests
from foldscope.core.model.session import Session, Usage
from tests.core.forensics.traces import Trace, rounds

T0 = 1_800_000_000.0


def priced_session(n: int) -> tuple[Session, list]:
    """n requests, each growing the one before, every other one after a gap past the five minutes (a wasting
    cause), every request priced."""
    t = Trace()
    ms = rounds(t, n, chars=200)
    for k in range(n):
        t.request(ms[: 4 + 3 * k], T0 + (400.0 if k % 2 else 60.0) * k, None)
    session = t.session()
    measured = measure_requests(session)
    c = [m.count_with_head for m in measured]
    usage = [Usage(cache_write=c[0], output=50)] + [
        Usage(cache_read=c[k - 1] // 2, cache_write=c[k] - c[k - 1] // 2, output=50) for k in range(1, n)
    ]
    session.trace = [replace(r, usage=u) for r, u in zip(session.trace, usage)]
    return session, measure_requests(session)


def test_a_cache_report_keeps_no_parts_a_request() -> None:
    """Each request's cost and waste by part are worked out when read, not kept: at 50,000 messages the two dicts
    and their floats a request, with each row's, cause's and measure's own attribute dict, were 6 MiB of the
    window's memory for its whole life. The report made over 300 priced requests keeps under 800 bytes a request
    (about 630 now; 1,180 with the parts kept, 1,385 with the rows' attribute dicts as well)."""
    n = 300
    session, measured = priced_session(n)
    cache_report(session, measured=list(measured))  # a first report made before measuring: the pricer's tables
    gc.collect()
    tracemalloc.start()
    try:
        report = cache_report(session, measured=measure_requests(session))
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.priced and all(r.priced.cost_usd for r in report.rows)  # every request priced
    assert any(r.priced.waste_usd for r in report.rows)  # and some of them wasted
    assert kept < 800 * n, f"{kept / n:.0f} bytes a request"


def test_the_parts_read_are_the_same_each_time() -> None:
    """The parts worked out when read add up to the request's bill, the same twice, and the totals are theirs."""
    session, measured = priced_session(40)
    report = cache_report(session, measured=measured)
    for row in report.rows:
        cost, waste = row.priced.cost_usd, row.priced.waste_usd
        assert cost is not None and waste is not None and row.priced.bill_usd is not None
        assert cost == row.priced.cost_usd and waste == row.priced.waste_usd
        assert abs(sum(cost.values()) - row.priced.bill_usd) < 1e-9
        assert set(cost) >= {"fresh", "cache_read", "output"} | set(row.causes.causes)
    totals = totals_of(report.rows)
    for cause in READ_INSTEAD:
        assert totals["by_cause"][cause]["waste_usd"] == round(sum((r.priced.waste_usd or {}).get(cause, 0.0) for r in report.rows), 8)
    assert any(totals["by_cause"][cause]["waste_usd"] for cause in READ_INSTEAD)


def test_making_a_cache_report_works_out_no_requests_parts(monkeypatch) -> None:
    """Whether every request is priced is asked without working out any request's parts (a dict of floats each: 0.05 s
    at 50,000 messages, on the window's path to its counted document); it is the same answer, priced or not."""
    from foldscope.core.forensics.cause_prices import Priced

    session, measured = priced_session(20)
    unpriced = replace(session, model="no-such-model-anywhere", trace=[replace(r, model=None) for r in session.trace])
    worked: list[Priced] = []
    real = Priced.parts

    def parts(self):
        worked.append(self)
        return real(self)

    monkeypatch.setattr(Priced, "parts", parts)
    priced_report = cache_report(session, measured=measured)
    unpriced_report = cache_report(unpriced, measured=measured)
    assert worked == []
    assert priced_report.priced and not unpriced_report.priced
    for report in (priced_report, unpriced_report):
        assert all(row.priced.has_parts == (real(row.priced) is not None) for row in report.rows)
