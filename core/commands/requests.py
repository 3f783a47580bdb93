"""`foldscope requests FILE`: a row per request (estimate, counted, scale, reported input, prefix share, over ceiling)."""

from __future__ import annotations

from typing import Any

from core.model import Session
from core.policy import KEYS, Policy, ceiling_from_text


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


def launch_policy(session: Session) -> Policy:
    """The policy the session was launched with (branch metadata api_launch), null and absent read as unset."""
    launch = session.branch_metadata.get("api_launch")
    if not isinstance(launch, dict):
        return Policy(source="default")
    source = f"{session.source or 'the session'}: metadata.api_launch"
    return Policy.from_mapping({k: launch[k] for k in KEYS if k in launch}, source, stored=True)


def policy_from_args(args, session: Session | None = None) -> Policy:
    """The launch record's policy, then the profile's keys, then the flags: each later one overrides."""
    base = launch_policy(session) if session is not None else Policy()
    if getattr(args, "profile", None):
        profile = Policy.from_yaml(args.profile)
        changes = {k: getattr(profile, k) for k in KEYS}
        base = base.with_values(profile.source, **changes)
    return Policy.from_flags(
        base, ceiling=args.ceiling, fold_at=args.fold_at, target=args.target,
        result_max=args.result_max, caching=args.caching, model=args.model,
    )


def register(subparsers) -> None:
    parser = subparsers.add_parser("requests", help="a row per request: estimate, counted, scale, reported input, prefix share")
    parser.add_argument("file", metavar="FILE")
    add_policy_flags(parser)
    parser.add_argument("--format", dest="input_format", metavar="F", help="the file's format (default: detect)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run_requests, format=format_requests)


def run_requests(args) -> dict[str, Any]:
    from core.formats import load_session
    from core.trace import measure_trace

    session = load_session(args.file, getattr(args, "input_format", None))
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
    return {
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


def format_requests(result: dict[str, Any]) -> str:
    c = result["ceiling"]
    head = f"{result['file']}: ceiling {c['value'] if c['value'] is not None else 'none'} ({c['source']}: {c['why']})"
    lines = [head, f"{'index':>5} {'estimate':>10} {'counted':>10} {'scale':>7} {'reported':>10} {'prefix':>7}  over"]
    for row in result["requests"]:
        reported = "-" if row["reported_input"] is None else f"{row['reported_input']:,}"
        share = "-" if row["prefix_share"] is None else f"{row['prefix_share']:.3f}"
        lines.append(f"{row['index']:>5} {row['estimate']:>10,} {row['counted']:>10,} {row['scale']:>7.4g} "
                     f"{reported:>10} {share:>7}  {'OVER' if row['over_ceiling'] else ''}")
    for f in result["refused"]:
        parts = ", ".join(f"#{p['index']} {p['kind']} {p['tokens']:,}" for p in f["largest_parts"])
        lines.append(f"request {f['index']} refused: estimate {f['estimate']:,} >= ceiling {f['ceiling']:,}; largest parts: {parts}")
    return "\n".join(lines)
