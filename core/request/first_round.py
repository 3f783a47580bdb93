"""The protected first round (ADR-0130 Amendment 4): found in the view, decided once at a tenth of the ceiling, kept.

The first round is the first instruction, its answer, and that answer's calls and results. It
ends at the next instruction, the next answer or a note; a task followed by a note has no first
round, and before the answer exists there is none. It is decided once, while caching is on and a
ceiling resolves (a fold is installed): included when its compiled messages (no system block),
counted and scaled, come to at most a tenth of the ceiling (equality fits). The decision lives in
branch metadata `prompt_cache.protected` and is never re-decided; a malformed one is dropped.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from foldscope.core.model.policy import Policy, resolve_ceiling
from foldscope.core.model.session import Message, Session
from foldscope.core.request.compile import IncludedRound, canonical, compile_request, session_tools
from foldscope.core.request.count import Counter, estimate
from foldscope.core.request.projection import PROJECTION_VERSION
from foldscope.core.request.scale import stored_scale

DECIDED_BY = "foldscope"
SHARE = 10  # the round must fit a tenth of the ceiling


@dataclass(frozen=True)
class Round:
    """The first round found in a view: its members in view order and whether every call has its result."""

    members: tuple[str, ...]
    whole: bool

    @property
    def end(self) -> str:
        return self.members[-1]


def find_round(view: Sequence[Message]) -> Round | None:
    """The view's first round; None before its answer exists or when a note follows the task."""
    rest = [m for m in view if m.kind != "system"]
    start = next((i for i, m in enumerate(rest) if m.kind == "instruction"), None)
    if start is None or start + 1 >= len(rest):
        return None
    members = [rest[start]]
    following = rest[start + 1 :]
    # Amendment 4's note case stated as the ADR states it. Dropping it changes nothing (docs/testing.md): a note's kind is
    # "note", never "assistant" or "action_request", so the second test already refuses it. Tried:
    # tests/core/request/test_first_round.py's conversation(note_after_task=True), the task followed by a note.
    if following[0].kind == "note" or following[0].kind not in ("assistant", "action_request"):
        return None
    if following[0].kind == "assistant":
        members.append(following[0])
        following = following[1:]
    calls: dict[str, Message] = {}
    answered: set[str] = set()
    for m in following:
        if m.kind == "action_request":
            calls[m.id] = m
        elif m.kind == "action_response" and (call_id := _answers(m, calls)):
            answered.add(call_id)
        else:
            break  # the next instruction, answer or note ends the round
        members.append(m)
    return Round(tuple(m.id for m in members), whole=set(calls) <= answered)


def _answers(result: Message, calls: Mapping[str, Message]) -> str | None:
    """The id of the round's call this result (or clipped copy) answers, if any."""
    for cid, call in calls.items():
        if result.content.get("action_request_id") == cid:
            return cid
        if call.content.get("action_response_id") in (result.id, result.clipped_from):
            return cid
    return None


def read_decision(session: Session) -> dict[str, Any] | None:
    """The stored decision when it is well formed, else None (a malformed one is dropped: the round is pending)."""
    cache = session.branch_metadata.get("prompt_cache")
    decision = cache.get("protected") if isinstance(cache, dict) else None
    if not isinstance(decision, dict):
        return None
    members = decision.get("members")
    ok = (
        isinstance(members, list)
        and members
        and all(isinstance(m, str) for m in members)
        and decision.get("end") in members
        and isinstance(decision.get("included"), bool)
        and _whole(decision.get("ceiling"), 1)
        and _whole(decision.get("size"), 0)
        and (decision.get("bound") is None or _whole(decision.get("bound"), 1))
        and isinstance(decision.get("hash"), str)
        and _whole(decision.get("projection_version"), 0)
    )
    return decision if ok else None


def _whole(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def decide_first_round(
    session: Session,
    policy: Policy,
    counter: Counter | None = None,
    *,
    view: Sequence[Message] | None = None,
    store: bool = True,
    clock: Callable[[], float] = time.time,
) -> dict[str, Any] | None:
    """The decision for the session's first round: the stored one, else made now when the view carries the
    round whole, caching is on and a ceiling resolves; None while pending. `store=False` decides without
    writing branch metadata (for measuring a trace without changing the session)."""
    existing = read_decision(session)
    if existing is not None or not policy.caching:
        return existing
    ceiling = resolve_ceiling(policy, policy.model or session.model).ceiling
    if ceiling is None:
        return None  # no fold is installed: nothing folds, and the round stays pending
    view = session.view_messages() if view is None else list(view)
    found = find_round(view)
    if found is None or not found.whole:
        return None
    by_id = {m.id: m for m in view}
    members = [by_id[i] for i in found.members]
    scale = stored_scale(session)
    counted = (counter or Counter()).measure(members, record=session.record, policy=policy, marks=False).count
    size = estimate(counted, scale)
    payload = compile_request(members, record=session.record, policy=policy)
    decision = {
        "members": list(found.members),
        "end": found.end,
        "included": size * SHARE <= ceiling,
        "hash": hashlib.sha256(canonical(payload["messages"]).encode("utf-8")).hexdigest(),
        "ceiling": ceiling,
        "budget": ceiling / SHARE,
        "size": size,
        "scale": scale,
        "bound": policy.tool_result_max_chars,
        "projection_version": PROJECTION_VERSION,
        "at": clock(),
        "by": DECIDED_BY,
    }
    if store:
        cache = session.branch_metadata.get("prompt_cache")
        if not isinstance(cache, dict):
            cache = session.branch_metadata["prompt_cache"] = {}
        cache["protected"] = decision
    return decision


def included_round(decision: Mapping[str, Any] | None) -> IncludedRound | None:
    """What the compiler needs of an included round (its members, end and frozen bound); None otherwise."""
    if not decision or not decision.get("included"):
        return None
    return IncludedRound(frozenset(decision["members"]), decision["end"], decision.get("bound"))


def protected_ids(session: Session, policy: Policy | None = None, view: Sequence[Message] | None = None) -> frozenset[str]:
    """The ids no fold stage may take: an included round's members; a pending round's members (a pending
    round is protected); nothing for an excluded round, or when `policy` says caching is off."""
    if policy is not None and not policy.caching:
        return frozenset()
    decision = read_decision(session)
    if decision is not None:
        return frozenset(decision["members"]) if decision["included"] else frozenset()
    found = find_round(session.view_messages() if view is None else view)
    return frozenset(found.members) if found is not None else frozenset()


def included_ids(session: Session) -> frozenset[str]:
    """The members of an included round (what the first round's mark anchors on); empty otherwise."""
    decision = read_decision(session)
    return frozenset(decision["members"]) if decision is not None and decision["included"] else frozenset()


def remap_decision(session: Session, ids: Mapping[str, str]) -> None:
    """After a clone: the decision with its members renamed to the clone's ids; a clone missing one starts pending."""
    cache = session.branch_metadata.get("prompt_cache")
    decision = read_decision(session)
    if decision is None:
        return
    assert isinstance(cache, dict)  # read_decision found the decision in it
    if not all(m in ids for m in decision["members"]):
        del cache["protected"]
        return
    cache["protected"] = {**decision, "members": [ids[m] for m in decision["members"]], "end": ids[decision["end"]]}


def request_options(session: Session, policy: Policy | None) -> dict[str, Any]:
    """The keyword arguments compile_request and Counter take for the session's next request under a policy."""
    decision = read_decision(session) if policy is not None and policy.caching else None
    return {"record": session.record, "policy": policy, "tools": session_tools(session), "first_round": included_round(decision)}


def round_hash(messages: Sequence[Message], session: Session, policy: Policy, bound: int | None) -> str:
    """The SHA-256 of the compiled messages of a round, under `policy` with the result bound `bound`."""
    from dataclasses import replace

    frozen = replace(policy, tool_result_max_chars=bound) if policy.tool_result_max_chars != bound else policy
    payload = compile_request(list(messages), record=session.record, policy=frozen)
    return hashlib.sha256(canonical(payload["messages"]).encode("utf-8")).hexdigest()


def frontier(session: Session, policy: Policy, decision: Mapping[str, Any] | None, view: Sequence[Message]) -> str | None:
    """ "changed" when this request compiles the decided round differently from the decision's hash (a member
    gone, replaced by a copy, or a message put back inside it: a cache miss, and the members stay); "same"
    when it compiles as decided; None before a decision. The round is never decided again (Amendment 4)."""
    if not decision:
        return None
    members = set(decision["members"])
    at = [p for p, m in enumerate(view) if m.id in members]
    if len(at) != len(members):
        return "changed"
    span = [m for m in view[at[0] : at[-1] + 1] if m.kind != "system"]
    same = round_hash(span, session, policy, decision.get("bound")) == decision["hash"]
    return "same" if same else "changed"
