"""The status line's figures for a session file, kept between runs so each run reads only what the file gained.

A `StatusEngine` holds a Follower (core.formats.follow) and the Counter its measures memoise into: `update()`
polls the new lines and measures the trace again from the counter's memo (core.readout.trace_facts, the cache
causes' pass riding on the same count), so no block already counted is tokenised again. `figures()` turns
the result into plain data: the next request's predicted input against the agent's window and compaction point
and the policy's line and ceiling (core.readout.live), the last request's cache read and write with the cause of
a write that was not an append (core.forensics.causes), when the cached prefix expires, and the bill so far with
its wasted part (core.forensics.cache_report, the figures `foldscope cache` prints).

Between processes (`foldscope statusline` runs once per assistant message) the engine is pickled in the cache
folder beside a small JSON of the figures, keyed by the file's path; the state names the file's identity
(device, inode), the bytes read and digests of the file's first bytes and of the bytes before where reading
stopped. A run whose file has the same identity and size prints from the JSON alone (`load_figures`); a file
that grew is polled from where the last run stopped; one that shrank, was replaced or was rewritten before
that point is read again from scratch (`Snapshot.same_file`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False  # typing costs the status line's client 2 ms of its start-up: only the checker reads it
if TYPE_CHECKING:
    from typing import Any

try:  # blake2b without hashlib's OpenSSL start (the client runs once per assistant message: its start-up is the cost)
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

STATE_VERSION = 1
EDGE = 256  # bytes of the file compared at its start and just before where reading stopped


class Snapshot:  # a plain class: a dataclass costs the client inspect and ast, a NamedTuple typing
    """What identifies the file as last read: its identity, size, where the complete lines read end, and digests."""

    __slots__ = ("path", "dev", "ino", "size", "read_to", "start_digest", "edge_digest")

    def __init__(self, path: str, dev: int, ino: int, size: int, read_to: int, start_digest: str, edge_digest: str) -> None:
        self.path, self.dev, self.ino, self.size, self.read_to = path, dev, ino, size, read_to
        self.start_digest, self.edge_digest = start_digest, edge_digest

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def same_file(self, now: os.stat_result, path: str) -> bool:
        """Whether the file is the one read before, only grown: same identity, no smaller, the bytes read unchanged."""
        if (now.st_dev, now.st_ino) != (self.dev, self.ino) or now.st_size < self.read_to or path != self.path:
            return False
        return (
            _digest(path, 0, EDGE) == self.start_digest
            and _digest(path, max(0, self.read_to - EDGE), min(EDGE, self.read_to)) == self.edge_digest
        )


def _digest(path: str, offset: int, length: int) -> str:
    with open(path, "rb") as handle:
        handle.seek(offset)
        return blake2b(handle.read(length), digest_size=12).hexdigest()


def snapshot(path: str, read_to: int) -> Snapshot:
    st = os.stat(path)
    return Snapshot(
        path, st.st_dev, st.st_ino, st.st_size, read_to, _digest(path, 0, EDGE), _digest(path, max(0, read_to - EDGE), min(EDGE, read_to))
    )


def state_paths(folder: Path, path: str) -> tuple[Path, Path]:
    """The JSON of figures and the pickled engine for a session file (keyed by its absolute path)."""
    key = blake2b(os.path.abspath(path).encode("utf-8", "surrogateescape"), digest_size=10).hexdigest()
    return folder / f"{key}.json", folder / f"{key}.pickle"


def load_figures(folder: Path, path: str, profile: str | None) -> tuple[dict[str, Any] | None, Snapshot | None]:
    """The figures kept for the file and the snapshot they were made at (None, None when there are none, or they
    were made under another profile or state version)."""
    figures_path, _ = state_paths(folder, path)
    try:
        kept = json.loads(figures_path.read_text(encoding="utf-8"))
        if kept.get("version") != STATE_VERSION or kept.get("profile") != profile:
            return None, None
        return kept["figures"], Snapshot(**kept["snapshot"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


class StatusEngine:
    """One session file followed between status line runs: the follower, the counter and the policy choice."""

    def __init__(self, path: str, profile: str | None = None) -> None:
        from foldscope.core.formats.follow import Follower
        from foldscope.core.request.count import Counter
        from foldscope.core.request.trace_resume import TraceResume

        self.path = path
        self.profile = profile
        self.follower = Follower(path)
        self.counter = Counter()
        # The trace's counting pass, to go on from at the next update (in memory only: a warm reader's; a run that
        # loads the engine from its pickle measures the trace from the start, the counter's memo saving the counts).
        self.resume: Any = TraceResume()
        self.bytes_read = 0  # bytes of complete lines the last update read
        self.updates = 0
        self.last: dict[str, Any] = {}  # the figures of the last update (a warm reader saves them with the engine)

    def update(self) -> dict[str, Any]:
        """Read what the file gained and return the figures for the session as read so far."""
        start = self.follower.bytes_read
        self.follower.poll()
        self.bytes_read = self.follower.bytes_read - start
        self.updates += 1
        return figures_of(self.follower.session(), self.counter, self.profile, self.resume)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "resume": None}  # it holds the session read: the next process reads its own

    def __setstate__(self, state: dict[str, Any]) -> None:
        from foldscope.core.request.trace_resume import TraceResume

        self.__dict__.update(state)
        self.resume = TraceResume()

    def save(self, folder: Path, figures: dict[str, Any], pickled: bool = True) -> None:
        """Keep the engine and its figures for the next run (written aside and renamed: a run never sees half).
        Without `pickled` only the figures are written (a warm reader keeps the engine in memory until it ends)."""
        import pickle

        from foldscope.core.model.folders import make_private_folder

        make_private_folder(folder)
        figures_path, engine_path = state_paths(folder, self.path)
        snap = snapshot(self.path, self.follower.bytes_read)
        writes = [(engine_path, pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL))] if pickled else []
        if not pickled:
            engine_path.unlink(missing_ok=True)  # the pickle kept before is behind these figures now
        for target, data in (
            *writes,
            (
                figures_path,
                json.dumps({"version": STATE_VERSION, "profile": self.profile, "snapshot": snap.as_dict(), "figures": figures}).encode(),
            ),
        ):
            aside = target.with_suffix(target.suffix + ".tmp")
            fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(aside, target)

    @staticmethod
    def load(folder: Path, path: str, profile: str | None) -> StatusEngine | None:
        """The engine kept for the file, or None (none kept, another profile, or unreadable: rebuilt then)."""
        import pickle

        _, engine_path = state_paths(folder, path)
        try:
            with open(engine_path, "rb") as handle:
                engine = pickle.load(handle)  # the cache folder is the user's own (0700): its pickles are ours
        except Exception:  # a state from another version or a damaged one is rebuilt, never an error
            return None
        if not isinstance(engine, StatusEngine) or engine.path != path or engine.profile != profile:
            return None
        return engine


def figures_of(session: Any, counter: Any, profile: str | None = None, resume: Any = None) -> dict[str, Any]:
    """The status line's figures for a session read so far, measured with `counter` (its memo kept) and, with
    `resume`, the trace's counting pass going on from the last update's (core.request.trace_resume)."""
    from dataclasses import asdict

    from foldscope.core.forensics.cache_report import cache_report, totals_of
    from foldscope.core.forensics.cause_prices import READ_INSTEAD
    from foldscope.core.model.policy import Policy, PolicyChoice
    from foldscope.core.readout.document import _no_report
    from foldscope.core.readout.live import next_request_of
    from foldscope.core.readout.trace_facts import measure_requests

    choice = PolicyChoice(profile=Policy.from_yaml(profile)) if profile else None
    facts = measure_requests(session, counter, _no_report, choice, cache_pass=True, resume=resume, per_request=False)
    assert facts.measure is not None
    steps = facts.cache_pass
    heads = [row.unseen_head for row in facts.measure.trace.rows]
    if steps is None:
        cache = cache_report(session, facts.measure.policy, measured=[], tokens={})
    else:
        carry = None
        if resume is not None:  # the attribution goes on from the last update's (the rows a whole walk gives)
            from foldscope.core.forensics.causes import CausesCarry

            carry = resume.causes = resume.causes or CausesCarry()
        cache = cache_report(session, facts.measure.policy, measured=steps.measured(heads), tokens=steps.tokens, carry=carry)
    nxt = next_request_of(session, facts.measure.policy, facts.rules, facts.now_estimate, facts.now_predicted)
    totals = totals_of(cache.rows, cache.priced)
    by = totals["by_cause"]
    waste = None if totals["bill_usd"] is None else round(sum(by[c]["waste_usd"] or 0.0 for c in READ_INSTEAD), 8)
    return {
        "file": session.source,
        "model": facts.measure.model,
        "requests": len(session.trace),
        "next": {
            "size": nxt.size,
            "size_name": nxt.size_name,
            "estimate": nxt.estimate,
            "agent": [asdict(lim) for lim in nxt.agent],
            "policy": [asdict(lim) for lim in nxt.policy],
            "reached": [lim.name for lim in nxt.agent + nxt.policy if lim.name in nxt.reached],
        },
        "cache": _last_cache(cache.rows, session),
        "cost": {"bill_usd": totals["bill_usd"], "waste_usd": waste},
    }


def under_agent_window(figures: dict[str, Any], window: Any, agent: str = "claude_code") -> dict[str, Any]:
    """The figures under the window the agent says it runs the model in (Claude Code's status line input names it,
    `context_window.context_window_size`), which its transcript cannot tell (it names a [1m] model without the
    [1m]): that window, and the point the agent's rule compacts at in it unless the file's own automatic compaction
    named the point; the limits reached counted again. Unchanged when the agent names no window or the same one."""
    nxt = figures.get("next") or {}
    named = {lim["name"]: lim for lim in nxt.get("agent") or []}
    shown = named.get("context window")
    if not isinstance(window, int) or isinstance(window, bool) or window <= 0 or (shown and shown["tokens"] == window):
        return figures
    from foldscope.core.formats.registry import format_named
    from foldscope.core.readout.agent_limits import RECORDED_COMPACTION

    spec = format_named(agent)
    title = spec.title if spec is not None else agent
    limits = [{"name": "context window", "tokens": window, "source": f"{title}'s own (context_window_size in its status line input)"}]
    compact = named.get("compaction point")
    rule = spec.compaction(window) if spec is not None else None
    if compact is not None and compact["source"] == RECORDED_COMPACTION:
        limits.append(compact)
    elif rule is not None:
        limits.append({"name": "compaction point", "tokens": rule[0], "source": rule[1]})
    policy = nxt.get("policy") or []
    reached = [lim["name"] for lim in limits if nxt["size"] >= lim["tokens"]] + [
        lim["name"] for lim in policy if nxt["estimate"] >= lim["tokens"]
    ]
    return {**figures, "next": {**nxt, "agent": limits, "reached": reached}}


def _last_cache(rows: list, session: Any) -> dict[str, Any] | None:
    """The last request that reported usage: what it read and wrote, the cause of a write that was not an append,
    and when the prefix the last read or write touched expires."""
    from foldscope.core.model.cost import LIFETIME_SECONDS
    from foldscope.core.model.session import estimated_usage

    reported = [r for r in rows if r.causes.usage is not None]
    if not reported:
        return None
    last = reported[-1].causes
    u = last.usage
    assert u is not None
    causes = last.causes
    unusual = [c for c in ("rewrite", "expired", "provider", "unexplained") if causes.get(c)]
    out: dict[str, Any] = {
        "index": last.index,
        "read": u.cache_read,
        "write": u.cache_write,
        "causes": causes,
        "cause": unusual[0] if unusual else ("first" if causes.get("first") else "append" if causes.get("append") else None),
    }
    read = reported[-1].read
    if read is not None:  # an implicit cache (core.forensics.reads): no write billed; what broke a short read
        broke = [c for c in ("rewrite", "expired", "provider", "unexplained") if read.broke.get(c)]
        out.update(implicit=True, short=read.short, causes=dict(read.broke), cause=broke[0] if broke else None)
        if read.rewrite is not None:
            out["rewrite"] = {"why": read.rewrite.why, "message": read.rewrite.index}
    elif last.rewrite is not None:
        out["rewrite"] = {"why": last.rewrite.why, "message": last.rewrite.index}
    if last.since_cached_s is not None:
        out["gap_s"] = round(last.since_cached_s, 3)
    if last.miss_reason is not None:
        out["miss_reason"] = last.miss_reason
    if estimated_usage(session) is not None:  # shared out of totals (Copilot CLI): the line marks the figures
        out["estimated"] = True
    # The cached prefix lives from the last request that read or wrote it: an hour for a prefix written with
    # one-hour marks, five minutes for the part after them (the one that expires first).
    at = {request.index: request.at for request in session.trace}
    touched = [r.causes for r in reported if (r.causes.usage.cache_read + r.causes.usage.cache_write) > 0]
    if touched:
        t = touched[-1]
        tu = t.usage
        hour_end = tu.cache_read + tu.cache_write_1h if tu.cache_write_1h else min(t.one_hour_end, tu.cache_read)
        whole = tu.cache_read + tu.cache_write
        out["touched"] = {
            "index": t.index,
            "at": at.get(t.index),
            "lifetime_s": LIFETIME_SECONDS["1h" if hour_end >= whole else "5m"],
            "hour_part": min(hour_end, whole),
        }
    return out
