"""A policy sweep: every policy of a grid replayed over every session, summed per policy, and the cheapest safe one.

One task is one session under a set of policies: the session is read and counted once and every policy's
replay shares that count (measure once, fold many). A task returns plain data (a row per policy), so a
process pool or a Dask cluster can carry it, and the sums do not depend on which engine ran which task.
Costs compare modelled with modelled: each policy's replay against the modelled replay of the recording
under the same cache setting; the bill (the reported usage priced per request) is shown beside, never as
the baseline.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from foldscope.core.formats.aider import HISTORY as AIDER_HISTORY
from foldscope.core.formats.discover import session_entries
from foldscope.core.formats.opencode import DATABASE as OPENCODE_DATABASE
from foldscope.core.model.launch import session_policy
from foldscope.core.model.policy import KEYS, Policy, PolicyChoice, PolicyError
from foldscope.core.model.session import NotASession, ReadError, Session
from foldscope.core.replay.advice import recommend, session_facts
from foldscope.core.replay.agent_settings import compaction_point
from foldscope.core.replay.lab import cache_rules, run_strategy
from foldscope.core.replay.layouts import Layouts, model_name
from foldscope.core.replay.strategies import STRATEGIES
from foldscope.core.request.count import Counter
from foldscope.core.request.measure import Measure

# An Aider history kept under another name than its hidden .aider.chat.history.md ($AIDER_CHAT_HISTORY_FILE, a
# copy per project) is named for it: `cache DIR` read it among the folder's own files where `usage DIR` found none.
SESSION_SUFFIXES = (".jsonl", ".json", ".eval", ".aider.chat.history.md")
SESSION_NAMES = (AIDER_HISTORY, OPENCODE_DATABASE)  # session files by their whole name, hidden or of another suffix
SKIPPED_FOLDERS = ("subagents",)  # a Claude Code session's subagents are part of it, not sessions of their own
BASELINE = "recorded"


@dataclass(frozen=True)
class PolicyPoint:
    """One policy of a sweep: a strategy and the five keys it replays under (None: the key is unset)."""

    name: str
    strategy: str
    ceiling: str | None = None  # a positive integer as text, "auto" or "none"
    fold_at: float | None = None
    target: float | None = None
    result_max: int | None = None
    caching: bool | None = None
    profile: bool = False  # a named profile: its keys replace the stored policy's, unset ones included
    # The agent's own compaction, its knob set for this fraction of its window (tune --compact-at): the compaction
    # strategy at the point the agent's knob gives (core.replay.agent_settings), the window as the ceiling.
    compact_at: float | None = None

    def label(self) -> str:
        if self.compact_at is not None:
            parts = [f"agent's compaction at {self.compact_at:g}"]
        else:
            # Unset keys are each session's launch record's (core.model.launch.session_policy), else the defaults (auto,
            # no bound): a label saying "ceiling auto" swept a native file at the 50,000 its launch record held.
            parts = [self.strategy, f"ceiling {self.ceiling}" if self.ceiling else "ceiling as launched"]
        if self.fold_at is not None:
            parts.append(f"line {self.fold_at:g}")
        if self.target is not None:
            parts.append(f"target {self.target:g}")
        parts.append(f"bound {self.result_max}" if self.result_max else "bound as launched")
        parts.append(caching_words(self.caching))
        return ", ".join(parts)


def caching_words(caching: bool | None) -> str:
    """What a policy's caching setting means, in words that hold beside any read share: off places no marks, but a
    provider that caches by itself (OpenAI's automatic cache) still reads; unset keeps what the session shows."""
    if caching is None:
        return "caching as recorded"
    return "caching on" if caching else "no marks placed by the policy"


def grid_items(values: str | Iterable[str] | None) -> list[str]:
    """A grid field's values: one comma-separated text, or several (`--x a --x b` is `--x a,b`)."""
    texts = [values] if isinstance(values, str) else list(values or [])
    return [item.strip() for text in texts for item in text.split(",") if item.strip()]


def grid_numbers(values: str | Iterable[str] | None, kind: type, field: str, key: str) -> list[Any]:
    """A grid field's numbers (`none` for no bound where the kind is int); `[None]` when empty, the default."""
    out: list[Any] = []
    for item in grid_items(values):
        if kind is int and item == "none":
            out.append(None)
            continue
        try:
            out.append(kind(item))
        except ValueError:
            raise PolicyError(field, key, f"{item!r} is not a number") from None
    return out or [None]


def grid_cachings(values: str | Iterable[str] | None, field: str) -> list[bool | None]:
    """A grid field's prompt caching settings, each on or off; `[None]` (the session's own) when empty."""
    words = {"on": True, "true": True, "off": False, "false": False}
    out: list[bool | None] = []
    for item in grid_items(values):
        if item.lower() not in words:
            raise PolicyError(field, "prompt_caching", f"{item!r} is not on or off")
        out.append(words[item.lower()])
    return out or [None]


def grid(
    *,
    ceilings: Sequence[str | None] = (None,),
    fold_ats: Sequence[float | None] = (None,),
    targets: Sequence[float | None] = (None,),
    result_maxes: Sequence[int | None] = (None,),
    cachings: Sequence[bool | None] = (None,),
    strategies: Sequence[str] = ("adr",),
) -> list[PolicyPoint]:
    """Every combination of the values given, each checked as a policy before any session is read."""
    points = []
    for strategy, ceiling, fold_at, target, bound, caching in itertools.product(
        strategies, ceilings, fold_ats, targets, result_maxes, cachings
    ):
        if strategy not in STRATEGIES:
            raise PolicyError("--strategy", "strategy", f"{strategy!r} is not one of {', '.join(STRATEGIES)}")
        point = PolicyPoint("", strategy, ceiling, fold_at, target, bound, caching)
        policy_of(point)  # refuses a bad value or pair (a target at or above the line) by name
        points.append(PolicyPoint(point.label(), strategy, ceiling, fold_at, target, bound, caching))
    return points


def compact_points(
    fractions: Sequence[float],
    result_maxes: Sequence[int | None] = (None,),
    cachings: Sequence[bool | None] = (None,),
) -> list[PolicyPoint]:
    """The agent's own compaction at each fraction of its window (`tune --compact-at`), each a point of the sweep."""
    points = []
    for fraction, bound, caching in itertools.product(fractions, result_maxes, cachings):
        if not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
            raise PolicyError("--compact-at", "compact-at", f"{fraction!r} is not a fraction of the window in (0, 1]")
        point = PolicyPoint("", "compaction", None, None, None, bound, caching, compact_at=float(fraction))
        policy_of(point)  # the bound and caching checked as any policy's
        points.append(PolicyPoint(point.label(), "compaction", None, None, None, bound, caching, compact_at=float(fraction)))
    return points


def points_from_profiles(profiles: Mapping[str, Any], source: str) -> list[PolicyPoint]:
    """Named profiles (a YAML mapping name -> policy keys and `strategy` or `strategies`) as policy points."""
    points = []
    for name, keys in profiles.items():
        if not isinstance(keys, Mapping):
            raise PolicyError(source, str(name), "must be a mapping of policy keys")
        policy = Policy.from_mapping({k: v for k, v in keys.items() if k not in ("strategy", "strategies")}, f"{source}: {name}")
        strategies = keys.get("strategies", keys.get("strategy", "adr"))
        for strategy in [strategies] if isinstance(strategies, str) else list(strategies):
            if strategy not in STRATEGIES:
                raise PolicyError(f"{source}: {name}", "strategy", f"{strategy!r} is not one of {', '.join(STRATEGIES)}")
            ceiling = policy.max_input_tokens
            points.append(
                PolicyPoint(
                    f"{name} ({strategy})" if not isinstance(strategies, str) else str(name),
                    strategy,
                    None if ceiling is None else str(ceiling),
                    policy.context_fold_at,
                    policy.context_fold_target,
                    policy.tool_result_max_chars,
                    policy.prompt_caching,
                    profile=True,
                )
            )
    if not points:
        raise PolicyError(source, "policies", "names no profile")
    return points


def policy_of(point: PolicyPoint) -> Policy:
    """The point as a Policy, through the same flag rules `foldscope replay` applies."""
    return Policy.from_flags(
        ceiling=point.ceiling,
        fold_at=None if point.fold_at is None else str(point.fold_at),
        target=None if point.target is None else str(point.target),
        result_max=None if point.result_max is None else str(point.result_max),
        caching=point.caching,
    )


def choice_of(point: PolicyPoint) -> PolicyChoice:
    """What a person would have chosen to get this point: the same flags (or the named profile) `foldscope
    replay` takes, laid over each session's launch record the same way (core.model.launch.session_policy)."""
    policy = policy_of(point)
    if point.profile:
        return PolicyChoice(profile=policy)
    given = {
        "max_input_tokens": point.ceiling,
        "context_fold_at": point.fold_at,
        "context_fold_target": point.target,
        "tool_result_max_chars": point.result_max,
        "prompt_caching": point.caching,
    }
    return PolicyChoice(flags=tuple((key, getattr(policy, key)) for key in KEYS if given.get(key) is not None))


def measure_of(point: PolicyPoint, session: Session, counter: Counter | None = None, window: int | None = None) -> Measure:
    """The point's measure over the session; an agent's compaction point (compact_at) runs with the agent's window as
    its ceiling, since a request at or past the window is one the provider refuses (none when no window is known)."""
    choice = choice_of(point)
    if point.compact_at is not None:
        # No window known: no point to put the agent's knob at, so no ceiling, and the compaction does not act.
        choice = PolicyChoice(flags=(("max_input_tokens", window or "none"), *choice.flags))
    return Measure(session, session_policy(session, choice), counter=counter)


# (agent, its window in tokens or None) for a session: core.readout.agent_limits's rules, handed in by the command,
# since a replay sits below the readout layer that keeps them.
Limits = Callable[[Session], tuple[str, "int | None"]]


def tune_session(path: str, points: Sequence[PolicyPoint], limits: Limits | None = None) -> dict[str, Any]:
    """One task: a session read once and replayed under every point; plain data, or the error by name.
    `limits` gives the agent and its window, for the points that set the agent's own compaction (compact_at)."""
    from foldscope.core.formats.discover import file_sessions

    try:
        local = _local(path)
    except ReadError as exc:
        return {"file": path, "error": str(exc)}
    except OSError as exc:
        return {"file": path, "error": f"{path}: {exc.strerror or exc}"}
    each = file_sessions(Path(local), named=path)
    if each != [(None, path)]:
        # A file of several sessions (an Aider history's runs, an OpenCode database, an Inspect AI log's samples) is
        # each of them, named as `usage` names them (summarise reads `each`): read whole it was one failure.
        return {"file": path, "each": [_tuned(local, name, sample, points, limits) for sample, name in each]}
    return _tuned(local, path, None, points, limits)


def _tuned(local: str, path: str, sample: str | None, points: Sequence[PolicyPoint], limits: Limits | None) -> dict[str, Any]:
    """One session of the file `local` (`sample`, or its only one) replayed under every point, named `path` in the results."""
    from foldscope.core.formats import load_session

    try:
        session = load_session(local, sample=sample)
    except NotASession as exc:
        return {"file": path, "skipped": exc.problem}
    except ReadError as exc:
        return {"file": path, "error": str(exc)}
    except OSError as exc:
        return {"file": path, "error": f"{path}: {exc.strerror or exc}"}
    try:
        rows, bill = _replay_points(session, points, limits)
        return {
            "file": path,
            "format": session.format,
            "model": model_name(Measure(session)),
            "requests": len(session.trace),
            "bill_usd": bill,
            "rows": rows,
            "children": session.children_files(),
        }
    except Exception as exc:  # one bad session is a named failure in the results, never the end of a sweep
        return {"file": path, "error": f"{path}: {type(exc).__name__}: {exc}"}


def _replay_points(
    session: Session, points: Sequence[PolicyPoint], limits: Limits | None = None
) -> tuple[list[dict[str, Any]], float | None]:
    """Every point's totals on one session, and the bill. The counter (each message's tokens) is shared by
    every replay of the session; the modelled recording is replayed once per cache setting and bound."""
    counter = Counter()
    baselines: dict[tuple[bool, int | None], float | None] = {}
    bill: float | None = None
    rows = []
    agent, window = limits(session) if limits is not None and any(p.compact_at is not None for p in points) else (session.format, None)
    for point in points:
        measure = measure_of(point, session, counter, window)
        layouts = Layouts(measure)
        compacts_at = None
        if point.compact_at is not None and window is not None:
            compacts_at = layouts.compact_point = compaction_point(agent, point.compact_at, window)[0]
        totals = run_strategy(session, point.strategy, layouts).totals()
        key = (measure.policy.caching, measure.policy.tool_result_max_chars)
        if key not in baselines:
            recorded = run_strategy(session, BASELINE, Layouts(measure)).totals()
            baselines[key] = recorded["modelled_cost_usd"]
            bill = recorded["cost_usd"] if recorded["reported_requests"] else None  # the recording as billed
        rows.append(
            {
                "policy": point.name,
                "strategy": point.strategy,
                "ceiling": measure.ceiling,
                "requests": totals["requests"],
                "refused": totals.get("refused", 0),
                "over_ceiling": totals["over_ceiling"],
                "folds": totals["folds"],
                "rewrites": totals["rewrites"],
                "fresh": totals["fresh"],
                "cache_read": totals["cache_read"],
                "cache_write": totals["cache_write"],
                "peak": totals["peak"],
                "cost_usd": totals["cost_usd"],
                "recorded_modelled_cost_usd": baselines[key],
                "cost_not_comparable": totals.get("cost_not_comparable"),
                "cache": cache_rules(measure)[0].mode,
                **(
                    {"agent": agent, "window": window, "compact_at": point.compact_at, "compacts_at": compacts_at}
                    if point.compact_at is not None
                    else {}
                ),
            }
        )
    return rows, bill


def _local(path: str) -> str:
    """A local path for a session: an fsspec URL (s3://, gs://, file://) is copied to a temporary file first."""
    if "://" not in path:
        return path
    try:
        import fsspec  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:
        raise ReadError(path, "path", "a remote path needs fsspec and its backend installed") from exc
    suffix = Path(path.split("?")[0]).suffix
    with fsspec.open(path, "rb") as source, tempfile.NamedTemporaryFile(suffix=suffix, delete=False) as copy:
        copy.write(source.read())
    return copy.name


def session_paths(inputs: Iterable[str]) -> list[str]:
    """Every session file under the inputs (files, folder trees, fsspec URLs), sorted, each session once.

    Folders are walked whole; hidden entries, subagent folders and files that are not session-shaped (by suffix or
    name: `session_shaped`) are skipped, so an agent's session folder can be given as it is; a Cline task's
    files name it once and an OpenCode storage's message and part files are read with their session
    (core.formats.discover.session_entries), so `usage`, `tune` and the folder commands count each session once."""
    found: set[str] = set()
    for given in inputs:
        if "://" in given:
            found.update(_remote_paths(given))
            continue
        path = Path(given)
        if path.is_dir():
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
                found.update(str(Path(folder) / f) for f in files if session_shaped(f))
        else:
            found.add(str(path))  # a file named on its own is read, whatever its name (bad ones fail by name)
    return session_entries(sorted(found))


def listed(name: str) -> bool:
    """Whether a folder walk lists a file of this name: hidden files are left out, but for the session files known by
    name (aider's default history, `.aider.chat.history.md` in a project's root, which `sessions` finds there too)."""
    return not name.startswith(".") or name in SESSION_NAMES


def session_shaped(name: str) -> bool:
    """Whether a file met in a folder's tree is read as a session: by its suffix (hidden ones left out), or its name
    (aider's default history, OpenCode's database)."""
    return name in SESSION_NAMES or listed(name) and name.endswith(SESSION_SUFFIXES)


def _remote_paths(url: str) -> list[str]:
    try:
        import fsspec
    except ImportError as exc:
        raise ReadError(url, "path", "a remote path needs fsspec and its backend installed") from exc
    fs, root = fsspec.core.url_to_fs(url)
    protocol = url.split("://", 1)[0]
    if not fs.isdir(root):
        return [url]
    return [
        f"{protocol}://{p}"
        for p in fs.find(root)
        if session_shaped(p.rsplit("/", 1)[-1])
        and not any(part.startswith(".") or part in SKIPPED_FOLDERS for part in p[len(root) :].split("/")[:-1])
    ]


@dataclass
class PolicyTotals:
    """One policy summed over every session that read."""

    policy: str
    strategy: str
    sessions: int = 0
    requests: int = 0
    refused: int = 0
    over_ceiling: int = 0
    folds: int = 0
    rewrites: int = 0
    fresh: int = 0
    cache_read: int = 0
    cache_write: int = 0
    peak: int = 0
    cost_usd: float = 0.0
    recorded_modelled_cost_usd: float = 0.0
    bill_usd: float = 0.0
    unpriced: int = 0  # sessions whose model no price source knows: left out of every cost sum
    not_comparable: int = 0  # sessions where the policy refused requests: its cost there leaves them out
    no_ceiling: int = 0  # sessions the policy ran with no ceiling (none given, or auto on one flat price tier)

    def add(self, row: Mapping[str, Any], bill: float | None) -> None:
        self.sessions += 1
        self.no_ceiling += row["ceiling"] is None and row["strategy"] != "none"  # none never acts, ceiling or not
        for key in ("requests", "refused", "over_ceiling", "folds", "rewrites", "fresh", "cache_read", "cache_write"):
            setattr(self, key, getattr(self, key) + row[key])
        self.peak = max(self.peak, row["peak"])
        refusing = bool(row.get("cost_not_comparable"))
        if (row["cost_usd"] is None and not refusing) or row["recorded_modelled_cost_usd"] is None:
            self.unpriced += 1
            return
        # The recording's figures do not depend on the policy: summed over every priced session, as for any policy.
        self.recorded_modelled_cost_usd += row["recorded_modelled_cost_usd"]
        self.bill_usd += bill or 0.0
        if refusing:
            self.not_comparable += 1
            return
        self.cost_usd += row["cost_usd"]

    def as_row(self) -> dict[str, Any]:
        out = asdict(self)
        sent = self.fresh + self.cache_read + self.cache_write
        out["cache_read_share"] = round(self.cache_read / sent, 6) if sent else 0.0
        for key in ("cost_usd", "recorded_modelled_cost_usd", "bill_usd"):
            out[key] = round(out[key], 6)
        base = self.recorded_modelled_cost_usd
        out["cost_vs_recorded"] = round(self.cost_usd / base, 6) if base else None
        out["cost_not_comparable"] = None
        if self.not_comparable:  # a sum that leaves out refused requests is never set beside the others' (nor $0)
            out["cost_usd"] = out["cost_vs_recorded"] = None
            out["cost_not_comparable"] = (
                f"not comparable: the policy refused requests in {self.not_comparable:,} of "
                f"{self.sessions:,} sessions (nothing sent for them)"
            )
        return out


def subagent_files(results: Iterable[Mapping[str, Any]], files: set[str]) -> int:
    """How many of the files swept are a subagent's beside its session (Claude Code's older layout): each is replayed
    as a file of its own, but counted as `usage`, `cache` and `replay DIR` count it, in its session."""
    owned = {str(Path(c).resolve()) for r in results for c in r.get("children", ())}
    return sum(1 for f in files if str(Path(f).resolve()) in owned)


def summarise(results: Iterable[Mapping[str, Any]], points: Sequence[PolicyPoint]) -> dict[str, Any]:
    """Per-policy totals, the per-session rows and failures (sorted, so any engine gives the same bytes),
    and the recommendation: the cheapest policy with no request refused or sent over the ceiling, as the
    agents' own settings, with its saving over the sessions swept and the sessions where it did worse."""
    totals = {p.name: PolicyTotals(p.name, p.strategy) for p in points}
    sessions, failures, skipped = [], [], []
    # A file of several sessions gave each of them (tune_session's `each`); a list: read again for the subagents' files.
    results = sorted((r for result in results for r in result.get("each", (result,))), key=lambda r: r["file"])
    for result in results:
        if "skipped" in result:
            skipped.append({"file": result["file"], "why": result["skipped"]})
            continue
        if "error" in result:
            failures.append({"file": result["file"], "error": result["error"]})
            continue
        for row in result["rows"]:
            totals[row["policy"]].add(row, result["bill_usd"])
            sessions.append(
                {"file": result["file"], "format": result["format"], "model": result["model"], "bill_usd": result["bill_usd"], **row}
            )
    policies = []
    for p in points:
        own = [s for s in sessions if s["policy"] == p.name]
        policies.append({**totals[p.name].as_row(), "compact_at": p.compact_at, **session_facts(own)})
    files = {s["file"] for s in sessions}
    apart = subagent_files(results, files)
    return {
        "sessions": len(files) - apart,
        "subagent_files": apart,
        "failed": failures,
        "skipped": skipped,
        "policies": policies,
        "recommendation": recommend(policies, sessions, points),
        "rows": sessions,
    }
