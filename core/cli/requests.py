"""`foldscope requests FILE`: a row per request (predicted and reported input, estimate, counted, unseen head, scale, prefix
share, over ceiling)."""

from __future__ import annotations

from typing import Any

from foldscope.core.cli.options import add_policy_flags, add_threads, measure_for, policy_choice, read_session
from foldscope.core.cli.output import columns_help
from foldscope.core.cli.words import FILE_HELP, num, plural
from foldscope.core.model import collector
from foldscope.core.model.caching import caching_of, unplaced_words
from foldscope.core.model.session import ReadError
from foldscope.core.request.measure import Measure
from foldscope.core.request.trace import part_words

# Each column of the table, as --help and docs/cli.md explain it (tests/core/cli/test_columns_explained.py holds all three).
COLUMNS = (
    ("index", "the request's number in the session, from 0"),
    (
        "predicted",
        "foldscope's prediction of the input the provider will count, made before the request's own report "
        "was known: the anchor's reported input plus the change since, or the count plus the unseen head",
    ),
    ("reported", "the input the provider reported for the request (fresh, cache reads and cache writes); - when none"),
    ("diff", "predicted against reported: (predicted - reported) / reported; - with no report"),
    (
        "from",
        "what the prediction started from: a request's index (35: request 35's reported input, plus what was "
        "added since), 0 for the first request's, or count (no report yet to anchor on: the count plus the "
        "unseen head)",
    ),
    ("estimate", "what the ceiling is checked against: (counted + unseen) x scale, never below the count"),
    ("counted", "foldscope's own exact o200k count of what the file holds of the request"),
    ("unseen", "the head the file does not hold (system prompt and tools), estimated from the reports; - when none"),
    ("scale", "the factor that keeps the estimate at or above what the provider counted so far (it only rises)"),
    (
        "prefix",
        "the share of this request's bytes the next request repeats from its start: 1.000 the next extends "
        "it (the cache can read all of it), lower where something before its end changed; - for the last",
    ),
    (
        "over / flag",
        "OVER: the estimate is at or past the ceiling; REPORTED OVER: the provider's count is; head "
        "estimated: before the first report the unseen head is a corpus estimate; flagged: the report "
        "disagrees with its prediction by over 25%",
    ),
)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "requests",
        help="a row per request: predicted and reported input, estimate, counted, scale, prefix share",
        **columns_help(
            "A row per recorded request, then what its flags mean, the next request's prediction and, with "
            "--payload K, request K's compiled payload with its cache marks.",
            COLUMNS,
        ),
    )
    parser.add_argument("file", metavar="FILE", help=FILE_HELP)
    add_policy_flags(parser)
    add_threads(parser)
    parser.add_argument("--format", dest="input_format", metavar="F", help="the file's format (default: detect)")
    parser.add_argument(
        "--sample",
        "--session",
        metavar="ID[:EPOCH]",
        help="the sample of an Inspect AI log, the session of an OpenCode database or the run of an Aider history, to read",
    )
    parser.add_argument("--payload", metavar="K", type=int, help="also show request K's compiled payload and where its cache marks are")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run_requests, format=format_requests)


@collector.spared()  # read and measured in one go: the collector off (core.model.collector)
def run_requests(args) -> dict[str, Any]:

    from foldscope.core.readout.usage_precision import marks as precision_marks

    choice = policy_choice(args)  # flags are checked before the file is read
    session = read_session(args.file, getattr(args, "input_format", None), getattr(args, "sample", None))
    measure = measure_for(session, choice, threads=args.threads)
    report = measure.trace
    policy = measure.policy
    r = report.resolution
    refused = []
    for row in report.rows:
        if row.refusal is not None:
            f = row.refusal
            refused.append(
                {
                    "index": row.index,
                    "estimate": f.estimate,
                    "ceiling": f.ceiling,
                    "counted": f.own_count,
                    "unseen_head": f.unseen_head,
                    "scale": round(f.scale, 6),
                    "largest_parts": [{"index": p.index, "kind": p.kind, "tokens": p.tokens} for p in f.parts],
                }
            )
    result = {
        "file": session.source,
        "model": measure.model,
        "ceiling": {"value": r.ceiling, "source": r.source, "why": r.why},
        "line": policy.fold_at,
        "target": policy.fold_target,
        "requests": [row.as_dict() for row in report.rows],
        "refused": refused,
        "scale": round(report.scale, 6),
        "scales": {str(m): round(v, 6) for m, v in report.scales.items()},
        "unseen_head": report.unseen_head,
        "next_predicted": report.next_predicted.predicted if report.next_predicted else None,
        "warnings": [*report.warnings, *(w for w in (measure.impossible_ceiling(),) if w)],
        **precision_marks(session),
    }
    if getattr(args, "payload", None) is not None:
        result["payload"] = compiled_payload(measure, args.payload)
    return result


def compiled_payload(measure: Measure, k: int) -> dict[str, Any]:
    """Request k's compiled payload under the policy, and its marks (where, lifetime, why)."""
    n = len(measure.requests)
    if not 0 <= k < n:
        raise ReadError(measure.session.source, "--payload", f"no request {k}: the session has {plural(n, 'request')}")
    marks = [m.as_dict() for m in measure.request_marks(k)]
    caching = caching_of(measure.policy, measure.session)
    return {"request": k, "marks": marks, "caching_why": unplaced_words(caching), "payload": measure.request_payload(k)}


def mark_place(mark: dict[str, Any]) -> str:
    if mark["block"] is None:
        return f"{mark['where']}[last]"
    return f"messages[{mark['item']}].content[{mark['block']}]"


UNSEEN = (
    "foldscope's own count of what the file holds; unseen: the head (system prompt and tools) the file does not "
    "hold, estimated per stretch between compactions as the smallest gap between reported input and that count; "
    "the estimate is (counted + unseen) x scale"
)
ESTIMATED = "not the provider's report: foldscope's estimate, the file's usage totals shared among its requests (see the warning)"
FLAGGED = (
    "the reported input disagrees wildly with its own prediction (more than 25%), so no later "
    "prediction anchors on it until the next report confirms it"
)


def format_requests(result: dict[str, Any]) -> str:
    from foldscope.core.readout.usage_precision import figure
    from foldscope.core.readout.usage_precision import lines as precision_lines

    c = result["ceiling"]
    head = f"{result['file']}: ceiling {num(c['value'], 'none')} ({ceiling_words(c['source'], c['why'])})"
    lines = [
        head,
        f"{'index':>5} {'predicted':>10} {'reported':>10} {'diff':>8} {'from':>6} {'estimate':>10} "
        f"{'counted':>10} {'unseen':>8} {'scale':>7} {'prefix':>7}  over / flag",
    ]
    for row in result["requests"]:
        rep = row["reported_input"]
        reported = "-" if rep is None else f"~{rep:,}" if row.get("reported_estimated") else figure(rep, result)
        diff = f"{(row['predicted'] - rep) / rep:+.1%}" if rep else "-"
        share = "-" if row["prefix_share"] is None else f"{row['prefix_share']:.3f}"
        flag = " flagged" if row.get("flagged") else ""
        unseen = f"{row['unseen_head']:,}" if row.get("unseen_head") else "-"
        lines.append(
            f"{row['index']:>5} {row['predicted']:>10,} {reported:>10} {diff:>8} {row['predicted_from']!s:>6} "
            f"{row['estimate']:>10,} {row['counted']:>10,} {unseen:>8} {row['scale']:>7.3f} {share:>7}  "
            f"{'OVER' if row['over_ceiling'] else ''}{' REPORTED OVER' if row.get('reported_over_ceiling') else ''}"
            f"{' head estimated' if row.get('predicted_head_source') else ''}{flag}"
        )
    rows = result["requests"]
    if any(r.get("unseen_head") for r in rows):
        lines.append(f"counted: {UNSEEN}")
    if c["value"] is not None and rows:
        # the two verdicts by their names: the estimate's (the fold core refuses on it) and the provider's own count
        lines.append(
            f"over_ceiling (the estimate at or past {c['value']:,}): {sum(r['over_ceiling'] for r in rows):,} "
            f"requests; reported_over_ceiling (the provider's count at or past it): "
            f"{sum(bool(r.get('reported_over_ceiling')) for r in rows):,}"
        )
    if any(row.get("flagged") for row in rows):
        lines.append(f"flagged: {FLAGGED}")
    if any(row.get("reported_estimated") for row in rows):
        lines.append(f"~reported: {ESTIMATED}")
    heads = {r["predicted_head_source"] for r in rows if r.get("predicted_head_source")}
    lines += [f"head estimated (before the session's first report): {h}" for h in sorted(heads)]
    if result.get("next_predicted") is not None:  # made from the rows' usage: estimated there, marked so (as inspect)
        estimated = any(row.get("reported_estimated") for row in rows)
        lines.append(f"next request: predicted {figure(result['next_predicted'], {**result, 'usage_estimated': estimated})} tokens")
    lines += precision_lines(result)
    lines += [f"warning: {w}" for w in result.get("warnings", [])]
    lines += _over_lines(result)
    if "payload" in result:
        from foldscope.core.cli.payload_text import payload_text

        shown = result["payload"]
        marks = ", ".join(f"{mark_place(m)} {m['lifetime']} ({m['anchor']})" for m in shown["marks"])
        lines += [
            "",
            *payload_text(shown["request"], shown["payload"], shown["marks"]),
            f"request {shown['request']:,}: cache marks at {marks or 'no block (' + shown['caching_why'] + ')'}",
        ]
    return "\n".join(lines)


SHOWN_OVER = 5  # recorded requests over the ceiling spelt out one by one; the rest are counted


def _over_lines(result: dict[str, Any]) -> list[str]:
    """The recorded requests whose estimate is at or past the ceiling (OVER): they were sent, so they are not
    called refused; what is said is that the fold core would refuse such a request, and whether the provider's
    own count was over too."""
    over = result["refused"]
    if not over:
        return []
    rows = {row["index"]: row for row in result["requests"]}
    provider = sum(1 for f in over if rows.get(f["index"], {}).get("reported_over_ceiling"))
    reported = sum(1 for f in over if rows.get(f["index"], {}).get("reported_input") is not None)
    sent = "it was sent anyway" if len(over) == 1 else f"all {len(over):,} were sent anyway"
    lines = [
        f"OVER: the estimate (foldscope's count times the scale) is at or past the ceiling, so foldscope's fold "
        f"would refuse such a request before sending it; {sent}."
    ]
    if provider < reported:
        lines.append(
            f"  The scale ({result['scale']:.3f}) only rises, as the spec's safety margin; `foldscope replay FILE "
            "--estimator predicted` shows what deciding on the predicted input would have done."
        )
    for f in over[:SHOWN_OVER]:
        row = rows.get(f["index"], {})
        rep = row.get("reported_input")
        said = "" if rep is None else f" (the provider counted {rep:,}: {'over' if row.get('reported_over_ceiling') else 'under'})"
        parts = ", ".join(part_words(p["index"], p["kind"], p["tokens"]) for p in f["largest_parts"])
        lines.append(f"  request {f['index']}: estimate {f['estimate']:,} >= ceiling {f['ceiling']:,}{said}; largest parts: {parts}")
    if len(over) > SHOWN_OVER:
        lines.append(f"  and {len(over) - SHOWN_OVER:,} more (`--json` lists every one)")
    return lines


def ceiling_words(source: str, why: str) -> str:
    """Where the ceiling came from and why, naming the source once ("auto: the first price tier ...")."""
    return why if why.startswith(f"{source}:") else f"{source}: {why}"
