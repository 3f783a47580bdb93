"""`foldscope requests FILE`: a row per request (estimate, counted, scale, reported input, prefix share, over ceiling)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from foldscope.core.model.policy import Policy, ceiling_from_text
from foldscope.core.model.session import Session


def add_policy_flags(parser, ceiling_required: bool = False) -> None:
    """The policy flags every measuring command takes; a profile's keys are overridden by flags."""
    parser.add_argument("--ceiling", metavar="N|auto|none", required=ceiling_required,
                        help="max_input_tokens: a positive integer, auto (the model's first price tier) or none")
    parser.add_argument("--per-call", metavar="N|auto|none", help="a per-call ceiling: may lower it, never raise it")
    parser.add_argument("--fold-at", metavar="F", help="context_fold_at, the line (default 0.8)")
    parser.add_argument("--target", metavar="F", help="context_fold_target (default 0.6)")
    parser.add_argument("--result-max", metavar="N", help="tool_result_max_chars, the result bound (at least 1024)")
    parser.add_argument("--caching", action="store_true", default=None, help="prompt_caching: place cache marks")
    parser.add_argument("--model", metavar="M", help="the model, for auto and pricing (default: the session's)")
    parser.add_argument("--profile", metavar="YAML", help="a YAML profile with the policy keys")
    add_prices_flag(parser)


def add_prices_flag(parser) -> None:
    """`--prices FILE`: price overrides over the project table and genai-prices (default: prices.json in the config folder)."""
    parser.add_argument("--prices", metavar="FILE", help="a prices.json whose models override every other price")


def launch_policy(session: Session) -> Policy:
    """The policy the session was launched with (branch metadata api_launch), null and absent read as unset."""
    from foldscope.core.model.launch import read_launch_policy

    return read_launch_policy(session)


def policy_from_args(args, session: Session | None = None) -> Policy:
    """The launch record's policy, or a profile in its place, then the flags: each later one overrides.

    A profile replaces the stored policy (Amendment 3: a resume with a profile uses that profile's settings,
    including their unset values), so a bound or fold pair the profile leaves out is removed, not kept;
    prompt_caching alone survives when the profile leaves it out (absence never erases a stored option;
    disabling it needs an explicit false)."""
    base = launch_policy(session) if session is not None else Policy()
    if getattr(args, "profile", None):
        profile = Policy.from_yaml(args.profile)
        caching = base.prompt_caching if profile.prompt_caching is None else profile.prompt_caching
        base = replace(profile, prompt_caching=caching, model=profile.model or base.model)
    return Policy.from_flags(
        base, ceiling=args.ceiling, fold_at=args.fold_at, target=args.target,
        result_max=args.result_max, caching=args.caching, model=args.model,
    )


def register(subparsers) -> None:
    parser = subparsers.add_parser("requests", help="a row per request: estimate, counted, scale, reported input, prefix share")
    parser.add_argument("file", metavar="FILE")
    add_policy_flags(parser)
    parser.add_argument("--format", dest="input_format", metavar="F", help="the file's format (default: detect)")
    parser.add_argument("--sample", metavar="ID[:EPOCH]", help="the sample of an Inspect AI log to read")
    parser.add_argument("--payload", metavar="K", type=int,
                        help="also show request K's compiled payload and where its cache marks are")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run_requests, format=format_requests)


def run_requests(args) -> dict[str, Any]:
    from foldscope.core.formats import load_session
    from foldscope.core.request.trace import measure_trace

    session = load_session(args.file, getattr(args, "input_format", None), getattr(args, "sample", None))
    policy = policy_from_args(args, session)
    report = measure_trace(session, policy, per_call=ceiling_from_text(args.per_call))
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
        "model": policy.model or session.model,
        "ceiling": {"value": r.ceiling, "source": r.source, "why": r.why},
        "line": policy.fold_at,
        "target": policy.fold_target,
        "requests": [row.as_dict() for row in report.rows],
        "refused": refused,
        "scale": round(report.scale, 6),
        "unseen_head": report.unseen_head,
    }
    if getattr(args, "payload", None) is not None:
        result["payload"] = compiled_payload(session, policy, args.payload)
    return result


def compiled_payload(session: Session, policy: Policy, k: int) -> dict[str, Any]:
    """Request k's compiled payload under the policy, and its marks (where, lifetime, why)."""
    from foldscope.core.model.session import ReadError
    from foldscope.core.request.count import Counter
    from foldscope.core.request.prefix import compile_for_prefix
    from foldscope.core.request.trace import build_trace, first_rounds, session_tools

    trace = build_trace(session)
    if not 0 <= k < len(trace):
        raise ReadError(session.source, "--payload", f"no request {k}: the session has {len(trace)}")
    rec = session.record
    views = [[rec.get(m) for m in r.view if m in rec] for r in trace[: k + 1]]
    first_round = first_rounds(session, policy, Counter(), views)[k]
    compiled = compile_for_prefix(views[k], record=rec, policy=policy, tools=session_tools(session), first_round=first_round)
    return {"request": k, "marks": [m.as_dict() for m in compiled.plan.marks], "payload": compiled.payload}


def mark_place(mark: dict[str, Any]) -> str:
    if mark["block"] is None:
        return f"{mark['where']}[last]"
    return f"messages[{mark['item']}].content[{mark['block']}]"


def format_requests(result: dict[str, Any]) -> str:
    c = result["ceiling"]
    head = f"{result['file']}: ceiling {c['value'] if c['value'] is not None else 'none'} ({c['source']}: {c['why']})"
    lines = [head, f"{'index':>5} {'estimate':>10} {'counted':>10} {'scale':>7} {'reported':>10} {'prefix':>7}  over"]
    for row in result["requests"]:
        reported = "-" if row["reported_input"] is None else f"{row['reported_input']:,}"
        share = "-" if row["prefix_share"] is None else f"{row['prefix_share']:.3f}"
        lines.append(f"{row['index']:>5} {row['estimate']:>10,} {row['counted']:>10,} {row['scale']:>7.4g} "
                     f"{reported:>10} {share:>7}  {'OVER' if row['over_ceiling'] else ''}")
    if "payload" in result:
        marks = ", ".join(f"{mark_place(m)} {m['lifetime']} ({m['anchor']})" for m in result["payload"]["marks"])
        lines.append(f"request {result['payload']['request']}: marks {marks or 'none (caching off)'}")
    for f in result["refused"]:
        parts = ", ".join(f"#{p['index']} {p['kind']} {p['tokens']:,}" for p in f["largest_parts"])
        lines.append(f"request {f['index']} refused: estimate {f['estimate']:,} >= ceiling {f['ceiling']:,}; largest parts: {parts}")
    return "\n".join(lines)
