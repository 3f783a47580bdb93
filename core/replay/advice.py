"""A sweep's answer: per policy, the sessions that rule it out, those where it cost more and the saving's spread; the
recommendation (the cheapest safe policy, or when none is safe for every session the best for the rest), written as
the settings people set: each agent's own compaction knob, and the lionagi profile.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from foldscope.core.replay.agent_settings import LIONAGI, agent_setting, compaction_profile_keys, lionagi_profile


class Point(Protocol):
    """What the advice reads of a sweep's policy (core.replay.tune.PolicyPoint)."""

    @property
    def name(self) -> str: ...
    @property
    def strategy(self) -> str: ...
    @property
    def ceiling(self) -> str | None: ...
    @property
    def fold_at(self) -> float | None: ...
    @property
    def target(self) -> float | None: ...
    @property
    def result_max(self) -> int | None: ...
    @property
    def caching(self) -> bool | None: ...
    @property
    def profile(self) -> bool: ...
    @property
    def compact_at(self) -> float | None: ...


def session_facts(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One policy over its sessions: the sessions that rule it out (a request refused or sent over its ceiling),
    those where it cost more than the recorded views under the same cache model, the saving's spread, and how
    many sessions ran where the provider caches by itself."""
    unsafe = sorted(r["file"] for r in rows if r["refused"] or r["over_ceiling"])
    compared = [r for r in rows if r["cost_usd"] is not None and r["recorded_modelled_cost_usd"]]
    worse = sorted(r["file"] for r in compared if r["cost_usd"] > r["recorded_modelled_cost_usd"])
    return {
        "ruled_out_by": unsafe,
        "worse_sessions": worse,
        "saving": saving_spread(compared),
        "automatic_cache_sessions": sum(r.get("cache") == "automatic" for r in rows),
    }


def saving_spread(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The saving against the modelled recording: in dollars over the sessions, and its share per session (the
    median, the least and the most), so a recommendation says what to expect and how far it varied."""
    if not rows:
        return None
    shares = sorted(1 - r["cost_usd"] / r["recorded_modelled_cost_usd"] for r in rows)
    n = len(shares)
    median = shares[n // 2] if n % 2 else (shares[n // 2 - 1] + shares[n // 2]) / 2
    return {
        "sessions": n,
        "usd": round(sum(r["recorded_modelled_cost_usd"] - r["cost_usd"] for r in rows), 6),
        "median_share": round(median, 6),
        "least_share": round(shares[0], 6),
        "most_share": round(shares[-1], 6),
    }


def recommend(
    policies: Sequence[Mapping[str, Any]], sessions: Sequence[Mapping[str, Any]] = (), points: Sequence[Point] = ()
) -> dict[str, Any]:
    """The cheapest policy that refused nothing and sent nothing over its ceiling, as the agents' settings; when
    none is safe for every session, which sessions rule each out, and the best policy for the rest: the one ruled
    out by the fewest sessions, cheapest against the recording on the sessions it kept safe."""
    safe = [p for p in policies if p["refused"] == 0 and p["over_ceiling"] == 0 and p["sessions"] > 0]
    by_name = {p.name: p for p in points}
    if safe:
        best = min(safe, key=lambda p: (p["cost_usd"], p["policy"]))
        others = [p for p in policies if p["sessions"] and p["cost_usd"] is not None and p["cost_usd"] < best["cost_usd"]]
        refusing = [p for p in policies if p["sessions"] and p.get("cost_not_comparable")]
        why = (
            (
                f"cheapest of {len(safe)} policies with no request refused or over the ceiling"
                if len(safe) > 1
                else "the one policy with no request refused or over the ceiling"
            )
            + (f"; {len(others)} cheaper {'one' if len(others) == 1 else 'ones'} went over it or refused" if others else "")
            + (
                f"; {len(refusing)} refused requests, so {'its' if len(refusing) == 1 else 'their'} cost is not comparable"
                if refusing
                else ""
            )
        )
        rows = [s for s in sessions if s["policy"] == best["policy"]]
        return _recommended(best, why, rows, by_name.get(best["policy"]), every_session=True)
    why = "every policy refused a request or sent one over its ceiling"
    ruled = [p for p in policies if p["sessions"] and p.get("ruled_out_by")]
    out: dict[str, Any] = {
        "policy": None,
        "why": why,
        "ruled_out": [{"policy": p["policy"], "by": p["ruled_out_by"]} for p in ruled],
    }
    files = {s["file"] for s in sessions}
    rest: list[tuple[tuple[int, float, str], Mapping[str, Any], list[Mapping[str, Any]]]] = []
    for p in ruled:
        kept = [s for s in sessions if s["policy"] == p["policy"] and s["file"] not in set(p["ruled_out_by"])]
        priced = [s for s in kept if s["cost_usd"] is not None and s["recorded_modelled_cost_usd"]]
        if not kept or not priced:
            continue
        ratio = sum(s["cost_usd"] for s in priced) / sum(s["recorded_modelled_cost_usd"] for s in priced)
        rest.append(((len(p["ruled_out_by"]), ratio, p["policy"]), p, kept))
    if not rest:
        return out
    _, best, kept = min(rest, key=lambda r: r[0])
    left_out = best["ruled_out_by"]
    out.update(
        _recommended(
            best,
            f"no policy is safe for every session; for the {len(kept):,} of {len(files):,} sessions that do not rule it out "
            f"(it is ruled out by {', '.join(_name(f) for f in left_out)}), the cheapest against the recording among the "
            "policies ruled out by the fewest sessions",
            kept,
            by_name.get(best["policy"]),
            every_session=False,
        )
    )
    out["left_out"] = left_out
    return out


def _recommended(
    best: Mapping[str, Any], why: str, rows: Sequence[Mapping[str, Any]], point: Point | None, every_session: bool
) -> dict[str, Any]:
    compared = [r for r in rows if r["cost_usd"] is not None and r["recorded_modelled_cost_usd"]]
    return {
        "policy": best["policy"],
        "strategy": best["strategy"],
        "cost_usd": best["cost_usd"],
        "cost_vs_recorded": best["cost_vs_recorded"],
        "why": why,
        "for_every_session": every_session,
        "sessions": len(rows),
        "saving": saving_spread(compared),
        "worse_sessions": sorted(r["file"] for r in compared if r["cost_usd"] > r["recorded_modelled_cost_usd"]),
        "settings": settings_for(point, rows) if point is not None else [],
    }


def settings_for(point: Point, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The policy as the settings people write: for the agent's own compaction, each agent's key at each window its
    sessions ran in, and the lionagi profile; for a fold of foldscope's (adr, band), the lionagi profile alone, since
    no agent's own settings hold it."""
    out: list[dict[str, Any]] = []
    if point.compact_at is None:
        keys = {
            "max_input_tokens": int(point.ceiling) if point.ceiling and point.ceiling.isdigit() else point.ceiling,
            "context_fold_at": point.fold_at,
            "context_fold_target": point.target,
            "tool_result_max_chars": point.result_max,
            "prompt_caching": point.caching,
            "strategy": point.strategy,
        }
        name = "tuned" if point.profile else f"{point.strategy}-{point.ceiling or 'auto'}"
        return [{"agent": LIONAGI, "title": "a lionagi run", "where": "a profile (--profile FILE)", "yaml": lionagi_profile(name, keys)}]
    for agent, window in sorted({(r["agent"], r["window"]) for r in rows if r.get("window")}):
        setting = agent_setting(agent, point.compact_at, window)
        if setting is not None:
            out.append(setting)
    # A lionagi run's profile at each window its own sessions ran in; with none of them swept, at the window most
    # sessions ran in, so that the profile is there to take.
    windows = sorted({r["window"] for r in rows if r.get("window") and r.get("agent") == LIONAGI})
    if not windows:
        counts = Counter(r["window"] for r in rows if r.get("window"))
        windows = [max(counts, key=lambda w: (counts[w], w))] if counts else []
    for window in windows:
        keys = {
            **compaction_profile_keys(point.compact_at, window),
            "tool_result_max_chars": point.result_max,
            "prompt_caching": point.caching,
        }
        out.append(
            {
                "agent": LIONAGI,
                "title": "a lionagi run",
                "where": "a profile (--profile FILE)",
                "window": window,
                "yaml": lionagi_profile(f"compact-at-{point.compact_at:g}", keys),
            }
        )
    return out


def _name(path: str) -> str:
    return Path(path.split("?")[0]).name
