"""The clip stage's arithmetic: which bodies it may cut, from what count to what floor, and one body's cut by the deficit.

Two paths share the search. Without a result bound (ADR-0130 Amendment 2) a body's current count is
the characters its copy keeps (its length for an original), its floor 1,024, and a copy is cut by
core.fold.clip.build_copy. Under a bound N (Amendment 3's five points) the current count is the
effective retained count (core.request.projection.effective_count of the original under the copy's
allowance), the floor min(1024, k_N), and a copy is the original's projection under the trial
allowances (core.fold.clip.build_bounded_copy) with the kept counts that projection returns, so
source the bound already hides is never credited again. Both skip the protected first round,
recovery protections and results before the newest note (the caller's `skip` and `start`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from foldscope.core.fold.clip import CLIP_FLOOR, Body, bodies_of, build_bounded_copy, build_copy, kept_of, original_of
from foldscope.core.model.session import FullRecord, Message
from foldscope.core.request.projection import ProjectionRefused, effective_count, retained_max

CUT_STEPS = 3  # measured candidates per body at most, besides the one at the floor
CUT_MARGIN = 8  # characters cut beyond the proposal, so rounding in the tokenizer rarely leaves a token over


@dataclass
class Slot:
    """A result in the view: its position, its original and index, and each body's current count."""

    position: int
    original: Message
    index: int
    kept: dict[str | None, int]


@dataclass(frozen=True)
class Eligible:
    """One body the clip stage may cut: from `current` down to no less than `floor`."""

    current: int
    floor: int
    slot: Slot
    body: Body


@dataclass(frozen=True)
class Candidate:
    """A measured cut: the candidate view, its estimate, the copy in it and the count the body now keeps."""

    view: list[Message]
    estimate: int
    copy: Message
    kept: int


def eligible_bodies(view: Sequence[Message], record: FullRecord, skip: set[str], start: int, bound: int | None) -> list[Eligible]:
    """Bodies of results at or after `start`, largest current count first, ties to the oldest original."""
    seen: set[str] = set()
    out: list[Eligible] = []
    for position, m in enumerate(view):
        if position < start or m.kind != "action_response":
            continue
        original = original_of(m, record)
        if original.id in skip or m.id in skip or original.id in seen or original.id not in record:
            continue
        seen.add(original.id)
        index = record.index_of(original.id)
        bodies = bodies_of(original)
        allowance = kept_of(m) if m is not original else {}
        slot = Slot(position, original, index, {})
        found: list[Eligible] = []
        try:
            for body in bodies:
                if bound is None:
                    current, floor = allowance.get(body.key, len(body.text)), CLIP_FLOOR
                else:
                    current = effective_count(body, index, bound, allowance.get(body.key))
                    k_n = retained_max(body, index, bound)
                    # min(1024, k_N) as Amendment 3 states it. No input tells it from a floor of 1,024 alone (issue
                    # 47): the floor is read only by `current > floor` below and by cut_body for a body that passed
                    # it, and current <= k_N always (effective_count is at most k_N). k_N >= 1024: both are 1,024;
                    # k_N < 1024: current <= k_N < 1024 is at both floors, no clip capacity either way. Tried: a
                    # 100,045-character body under N = 1,024 (k_N = current = 792, not eligible under both), and
                    # 3,000 random bodies, bounds 1,024 to 5,000, offsets, previews and allowances (none differ).
                    floor = min(CLIP_FLOOR, k_n if k_n is not None else 0)
                slot.kept[body.key] = current
                if current > floor:  # a body at its floor has no clip capacity left
                    found.append(Eligible(current, floor, slot, body))
        except ProjectionRefused:
            continue  # a body no projection fits is refused by the compiler, not clipped
        out.extend(found)
    out.sort(key=lambda e: (-e.current, e.slot.index, e.slot.position))
    return out


def make_copy(
    slot: Slot, key: str | None, keep: int, bound: int | None, new_id: Callable[[], str], created_at: float | None, digest: bool = True
) -> tuple[Message, int]:
    """A copy of the slot's original keeping `keep` of body `key` (the rest as they stand) and the count it keeps; with
    `digest`, the original's SHA-256 recorded (core.fold.clip.copy_of)."""
    trial = dict(slot.kept)
    trial[key] = keep
    if bound is None:
        return build_copy(slot.original, slot.index, trial, new_id=new_id, created_at=created_at, digest=digest), keep
    made, kept = build_bounded_copy(slot.original, slot.index, bound, trial, new_id=new_id, created_at=created_at, digest=digest)
    return made, kept.get(key, keep)


def cut_body(
    item: Eligible,
    view: list[Message],
    estimate: int,
    target: float,
    bound: int | None,
    measure: Callable[[Sequence[Message]], int],
    new_id: Callable[[], str],
    created_at: float | None,
    digest: bool = True,
) -> Candidate | None:
    """One body cut just enough to cover the deficit, by its own measured tokens per character.

    The body is first measured at its floor: what that saves per character removed proposes how
    much to keep; the proposal is built and measured, and corrected at most CUT_STEPS times. A
    proposal is always below the current count. Returns None when even the floor saves nothing. `digest`: whether
    each copy records its original's SHA-256 (every candidate is a copy, most of them discarded).
    """
    slot, current = item.slot, item.current

    def candidate(keep: int) -> Candidate:
        made, kept = make_copy(slot, item.body.key, keep, bound, new_id, created_at, digest)
        trial = view[: slot.position] + [made] + view[slot.position + 1 :]
        return Candidate(trial, measure(trial), made, kept)

    at_floor = candidate(item.floor)
    saved = estimate - at_floor.estimate
    if saved <= 0 or at_floor.kept >= current:
        return None
    per_char = saved / (current - at_floor.kept)
    deficit = estimate - target
    if deficit >= saved:
        return at_floor
    keep, best, over = current, None, deficit
    for _ in range(CUT_STEPS):  # a proposal, then corrections by what the last one measured
        keep = keep - math.ceil(over / per_char) - CUT_MARGIN
        if keep <= item.floor:
            return at_floor
        trial = candidate(keep)
        best = trial
        if trial.estimate <= target:
            break
        over = trial.estimate - target
        if trial.estimate < estimate and trial.kept < current:
            per_char = (estimate - trial.estimate) / (current - trial.kept)
    return best
