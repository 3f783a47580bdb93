"""What a replay's strategies mean beside the bill (why none acts without a ceiling, the modelled recording), and the
replay layer as the replay lab reads it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session
from foldscope.core.readout.agent_limits import agent_limits
from foldscope.core.replay.lab import ReplayRuns, replay_runs, replay_warnings
from foldscope.core.replay.layouts import model_name
from foldscope.core.replay.rows import cost_text, model_vs_reported, usd_text
from foldscope.core.replay.strategies import STRATEGIES
from foldscope.core.request.estimators import ADR, ESTIMATOR_SPECS, ESTIMATORS
from foldscope.core.request.measure import Measure

# What the replay lab reads of the replay layer: the runs, the strategies and estimators it offers, each total's cost
# and its line beside the bill, as every screen shows them.
__all__ = [
    "ADR",
    "BILL_LABEL",
    "ESTIMATORS",
    "ESTIMATOR_SPECS",
    "MANAGED",
    "MODELLED_LABEL",
    "STRATEGIES",
    "ReplayRuns",
    "beside_bill",
    "ceiling_suggestion",
    "compare_line",
    "cost_text",
    "model_vs_reported",
    "modelled_recording",
    "no_ceiling_line",
    "replay_measure",
    "replay_runs",
    "replay_warnings",
    "session_model",
    "shows_bill",
]


# The strategies that manage the view: band and compaction act at a line of the ceiling, adr folds under it; none
# never acts. Without a ceiling each sends every message, so all four give the same peak and cost.
MANAGED = ("none", "band", "compaction", "adr")

BILL_LABEL = "recorded, as billed"
MODELLED_LABEL = "recorded, modelled"


def no_ceiling_line(measure: Measure, strategies: Iterable[str], flag: str = "--ceiling N") -> str | None:
    """One line when no ceiling lets the strategies act: which do not, why (the measure's resolution), and the agent's
    own window or compaction point as a ceiling to give (`flag`: how the screen asks for one). None with a ceiling,
    or when no managing strategy is shown."""
    resolution = measure.resolution
    if resolution.ceiling is not None:
        return None
    idle = [s for s in MANAGED if s in set(strategies)]
    if not idle:
        return None
    one = len(idle) == 1
    return (
        f"no ceiling ({resolution.why}): {_listed(idle)} {'does' if one else 'do'} not act, so "
        f"{'it sends every message' if one else 'each sends every message and they show the same peak and cost'}; "
        f"{ceiling_suggestion(measure.session, measure.policy, flag)}"
    )


def ceiling_suggestion(session: Session, policy: Policy | None = None, flag: str = "--ceiling N") -> str:
    """The agent's compaction point and window as ceilings to try, each with where it comes from (the one place the
    replay asks core.readout.agent_limits, so the window resolves as on every other screen, a policy's
    context_window included)."""
    limits = agent_limits(session, policy)
    offers = [
        f"{name} {limit.tokens:,} ({limit.source})"
        for name, limit in (("the agent's compaction point", limits.compaction), ("its window", limits.window))
        if limit is not None
    ]
    if not offers:
        return f"give one with {flag} (the agent's window is not known for this session)"
    return f"give one with {flag}, such as {' or '.join(offers)}"


def _listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def beside_bill(totals: Sequence[Mapping[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Each strategy's totals with the label a screen heads it with; where the recording's bill stands beside other
    strategies, the modelled recording follows it, so the strategies (all modelled) have a like to be set against.

    The modelled recording is the recorded views under the same cache model and prices: its fresh, cache read,
    cache write and cost are the recorded run's modelled_* figures; what the cache model does not touch (requests,
    peak, counts) is the recording's. The recorded column is labelled as the bill where any request reported usage."""
    out: list[tuple[str, dict[str, Any]]] = []
    others = len(totals) > 1
    for t in totals:
        if t["strategy"] != "recorded" or not t.get("reported_requests"):
            out.append((t["strategy"], dict(t)))
            continue
        out.append((BILL_LABEL, dict(t)))
        if others and t.get("counted") is not False:  # an untokenised summary has no modelled figures
            out.append((MODELLED_LABEL, modelled_recording(t)))
    return out


def modelled_recording(t: Mapping[str, Any]) -> dict[str, Any]:
    """The recorded run's totals with the cache model's figures in place of the reported ones."""
    return {
        **t,
        "fresh": t["modelled_fresh"],
        "cache_read": t["modelled_cache_read"],
        "cache_write": t["modelled_cache_write"],
        "cost_usd": t["modelled_cost_usd"],
        **({"output": t["modelled_output"]} if "modelled_output" in t else {}),  # with the requests that reported none
        "cache_write_1h": t.get("modelled_cache_write_1h"),  # the stable head's, as every strategy is modelled
        "reported_requests": 0,
        "reported_peak": None,
        "reported_over_ceiling": None,
        "modelled": True,
    }


def compare_line(totals: Sequence[Mapping[str, Any]]) -> str | None:
    """The caveat every screen gives where strategies stand beside the bill: compare modelled with modelled."""
    if not shows_bill(totals):
        return None
    t = next(t for t in totals if t["strategy"] == "recorded")
    return (
        f"the other strategies are modelled with the same cache model: set them against recorded's modelled cost "
        f"{usd_text(t.get('modelled_cost_usd'))} ({MODELLED_LABEL}), not its bill {usd_text(t.get('cost_usd'))} "
        f"({BILL_LABEL}; the bill also pays the provider's own cache misses, which no model foresees)"
    )


def shows_bill(totals: Sequence[Mapping[str, Any]]) -> bool:
    """Whether strategies stand beside the recording's bill (so the caveat and the modelled recording belong)."""
    return len(totals) > 1 and any(t["strategy"] == "recorded" and t.get("reported_requests") for t in totals)


def replay_measure(session: Session, policy: Policy | None = None) -> Measure:
    """The Measure a replay of `session` runs under `policy` (its ceiling, line and target, its model's prices)."""
    return Measure(session, policy)


def session_model(session: Session) -> str | None:
    """The model a replay of `session` prices and caches as, without a provider prefix."""
    return model_name(Measure(session))
