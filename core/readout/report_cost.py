"""The report's cost sections: the bill by cause (each cache write put down to its cause) and the compactions."""

from __future__ import annotations

from typing import Any

from foldscope.core.readout.report_data import ReportData
from foldscope.core.readout.report_html import Markup, Section, esc, num, swatch_cost, table, usd

COMPACTION_HEADERS = (
    "Request",
    "Kind",
    "By",
    "Before",
    "After",
    "Summariser",
    "Literals lost",
    "Fetched again",
    "Cache rewrite",
    "Paid back after",
)


def cost_sections(data: ReportData) -> list[Section]:
    """Cost by cause and the compactions, from core.forensics (absent parts say why)."""
    try:
        from foldscope.core.forensics.cache_report import cache_report
        from foldscope.core.forensics.compactions import compaction_report
    except ImportError:  # pragma: no cover - the forensics layer ships with foldscope
        return [Section("Cost by cause", "<p>Not available in this build.</p>")]
    session, measure = data.session, data.measure
    steps = data.cache_pass
    try:
        if steps is not None and len(steps.rows) == len(session.trace):  # heard every request of the trace's count
            heads = [row.unseen_head for row in measure.trace.rows]  # the trace's own, from the same counts
            cache = cache_report(session, measure.policy, measured=steps.measured(heads), tokens=steps.tokens)
        else:
            cache = cache_report(session, measure.policy, measure.counter)
        totals = cache.totals()
    except Exception as exc:  # noqa: BLE001 - one section that cannot be made says why; the report still opens
        return [Section("Cost by cause", f"<p>Not available: {esc(type(exc).__name__)}: {esc(exc)}</p>")]
    out = [_cause_section(totals, cache.implicit)]
    try:
        # the checks' spans were cut from the session's compactions (compactions.literal_spans): not found again
        found = [(span.request, span.note) for span in data.literals.spans] if data.literals is not None else None
        report = compaction_report(session, measure.policy, measure.counter, cache=cache, literals=data.literals, found=found)
    except Exception as exc:  # noqa: BLE001
        out.append(Section("Compactions", f"<p>Not available: {esc(type(exc).__name__)}: {esc(exc)}</p>"))
        return out
    out.append(_compactions_section(report.compactions))
    return out


def _cause_section(totals: dict[str, Any], implicit: bool) -> Section:
    """Cost by cause: the bill's parts, the session's own requests, its children's, the total, and what each part is."""
    from foldscope.core.readout.cost_facts import PART_EXPLAINED

    kids = [kind for kind in ("subagents", "summariser") if totals["children"][kind]["requests"]]
    explained = "".join(
        f"<p class=legend>{esc(PART_EXPLAINED[p])}</p>"
        for p in totals["by_cause"]
        if p in PART_EXPLAINED and totals["by_cause"][p]["tokens"]
    )
    return Section(
        "Cost by cause",
        _cause_intro(totals, implicit, kids)
        + table(("Part", "Tokens", "Cost", "Share", "Wasted", "What it is"), _cause_rows(totals, kids), numeric=(1, 2, 3, 4))
        + explained,
    )


def _cause_rows(totals: dict[str, Any], kids: list[str]) -> list[tuple[Any, ...]]:
    from foldscope.core.readout.cost_facts import PART_WORDS

    bill, whole = totals.get("bill_usd"), totals.get("total_usd")

    def share(value: float | None) -> str:
        return f"{value / whole:.0%}" if value is not None and whole else "—"

    rows: list[tuple[Any, ...]] = [
        (
            Markup(swatch_cost(part) + esc(PART_WORDS[part][0])),
            num(v["tokens"]),
            usd(v.get("cost_usd")),
            share(v.get("cost_usd")),
            usd(v.get("waste_usd")) if "waste_usd" in v else "",
            PART_WORDS[part][1],
        )
        for part, v in totals["by_cause"].items()
        if v["tokens"] or v.get("cost_usd")
    ]
    rows.append((Markup("<b>this session's own requests</b>"), "", usd(bill), share(bill), "", "the parts above together"))
    rows += [
        (
            Markup(swatch_cost(kind) + esc(PART_WORDS[kind][0])),
            num(totals["children"][kind]["tokens"]),
            usd(totals["children"][kind]["cost_usd"]),
            share(totals["children"][kind]["cost_usd"]),
            "",
            PART_WORDS[kind][1],
        )
        for kind in kids
    ]
    rows.append(
        (
            Markup("<b>total</b>"),
            "",
            Markup(f"<b>{esc(usd(whole))}</b>"),
            "100%" if whole else "—",
            "",
            "everything this session was billed" + (", its subagents and summariser included" if kids else ""),
        )
    )
    return rows


def _cause_intro(totals: dict[str, Any], implicit: bool, kids: list[str]) -> str:
    from foldscope.core.readout.cost_facts import reads_words

    bill, whole = totals.get("bill_usd"), totals.get("total_usd")
    return (
        f"<p>The bill, the reported usage priced per request: <b>{esc(usd(bill))}</b>"
        + (f" ({num(totals['unpriced_requests'])} requests without a price)" if totals.get("unpriced_requests") else "")
        + (f"; with its subagents and compaction summariser, <b>{esc(usd(whole))}</b> in all" if kids else "")
        + (
            f". {esc(reads_words(totals['reads']))}</p>"
            if implicit
            else ". Each cache write is put down to its cause; <i>wasted</i> is what a write of text that could "
            "have been read (a rewrite, an expiry, a miss) cost beyond reading it; the first and append writes, "
            "the expected cost of growing, waste nothing.</p>"
        )
    )


def _compactions_section(compactions: list[Any]) -> Section:
    """Each compaction or fold: its sizes, what it cost (summariser, cache rewrite), what it lost and when it paid back."""
    if not compactions:
        return Section("Compactions", "<p>The session has no compactions or folds.</p>")
    rows = [
        (
            c.request,
            c.kind,
            c.source,
            num(c.before),
            num(c.after),
            usd(c.summariser_cost_usd),
            num(c.literals.lost_count),
            num(c.refetched_tokens),
            usd(c.rewrite_cost_usd),
            "—" if c.payback_requests is None else num(c.payback_requests),
        )
        for c in compactions
    ]
    return Section("Compactions", "<div class=wide>" + table(COMPACTION_HEADERS, rows, numeric=(0, 3, 4, 5, 6, 7, 8, 9)) + "</div>")
