"""`foldscope requests FILE`: a row per request (predicted and reported input, estimate, counted, scale, prefix share, over ceiling)."""

from __future__ import annotations

from typing import Any

from foldscope.core.cli.options import add_policy_flags, add_threads, measure_for, policy_choice, read_session
from foldscope.core.model.session import ReadError
from foldscope.core.request.measure import Measure


def register(subparsers) -> None:
    parser = subparsers.add_parser("requests", help="a row per request: estimate, counted, scale, reported input, prefix share")
    parser.add_argument("file", metavar="FILE")
    add_policy_flags(parser)
    add_threads(parser)
    parser.add_argument("--format", dest="input_format", metavar="F", help="the file's format (default: detect)")
    parser.add_argument("--sample", metavar="ID[:EPOCH]", help="the sample of an Inspect AI log to read")
    parser.add_argument("--payload", metavar="K", type=int,
                        help="also show request K's compiled payload and where its cache marks are")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run_requests, format=format_requests)


def run_requests(args) -> dict[str, Any]:

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
            refused.append({"index": row.index, "estimate": f.estimate, "ceiling": f.ceiling, "counted": f.counted,
                            "scale": round(f.scale, 6),
                            "largest_parts": [{"index": p.index, "kind": p.kind, "tokens": p.tokens} for p in f.parts]})
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
        "warnings": report.warnings,
    }
    if getattr(args, "payload", None) is not None:
        result["payload"] = compiled_payload(measure, args.payload)
    return result


def compiled_payload(measure: Measure, k: int) -> dict[str, Any]:
    """Request k's compiled payload under the policy, and its marks (where, lifetime, why)."""
    n = len(measure.requests)
    if not 0 <= k < n:
        raise ReadError(measure.session.source, "--payload", f"no request {k}: the session has {n}")
    return {"request": k, "marks": [m.as_dict() for m in measure.request_marks(k)], "payload": measure.request_payload(k)}


def mark_place(mark: dict[str, Any]) -> str:
    if mark["block"] is None:
        return f"{mark['where']}[last]"
    return f"messages[{mark['item']}].content[{mark['block']}]"


def format_requests(result: dict[str, Any]) -> str:
    c = result["ceiling"]
    head = f"{result['file']}: ceiling {c['value'] if c['value'] is not None else 'none'} ({c['source']}: {c['why']})"
    lines = [head, f"{'index':>5} {'predicted':>10} {'reported':>10} {'diff':>8} {'from':>6} {'estimate':>10} "
                   f"{'counted':>10} {'scale':>7} {'prefix':>7}  over"]
    for row in result["requests"]:
        rep = row["reported_input"]
        reported = "-" if rep is None else f"{rep:,}"
        diff = f"{(row['predicted'] - rep) / rep:+.1%}" if rep else "-"
        share = "-" if row["prefix_share"] is None else f"{row['prefix_share']:.3f}"
        flag = " flagged" if row.get("flagged") else ""
        lines.append(f"{row['index']:>5} {row['predicted']:>10,} {reported:>10} {diff:>8} {row['predicted_from']!s:>6} "
                     f"{row['estimate']:>10,} {row['counted']:>10,} {row['scale']:>7.4g} {share:>7}  "
                     f"{'OVER' if row['over_ceiling'] else ''}{flag}")
    if result.get("next_predicted") is not None:
        lines.append(f"next request: predicted {result['next_predicted']:,} tokens")
    lines += [f"warning: {w}" for w in result.get("warnings", [])]
    if "payload" in result:
        marks = ", ".join(f"{mark_place(m)} {m['lifetime']} ({m['anchor']})" for m in result["payload"]["marks"])
        lines.append(f"request {result['payload']['request']}: marks {marks or 'none (caching off)'}")
    for f in result["refused"]:
        parts = ", ".join(f"#{p['index']} {p['kind']} {p['tokens']:,}" for p in f["largest_parts"])
        lines.append(f"request {f['index']} refused: estimate {f['estimate']:,} >= ceiling {f['ceiling']:,}; largest parts: {parts}")
    return "\n".join(lines)
