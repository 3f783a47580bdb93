"""The counter's splice: a view that differs from a measured one in a few messages re-plans only the runs around them."""

# An edit of one message (its text, another kind, removed or inserted) in the middle of a long view shares a start and
# an end with the view measured before it. lay_out re-plans from the start's last assistant run to the view's end; the
# splice re-plans only the region from there to the first assistant run that starts inside the shared end (its
# "right cut"), and takes every block after it from the measured view as it was: the same blocks, keys and parts,
# shifted by the number of blocks the region gained or lost, the running counts shifted by its tokens.
#
# Exact when the region plans alone as the whole view plans it (core.request.plan.plan_runs), which holds when:
# - the region begins where lay_out would begin re-planning (core.request.count_step.start_of, closed_run) and ends
#   where a user run is followed by an assistant run in both views, so no run crosses either cut and every result's
#   pairing (with a call of the run right before its own) stays inside the region or outside it;
# - no message outside the region names one inside it, in either view, and no message inside names one outside (a
#   result's call by `action_request_id`, a call's result by `action_response_id`, a copy's original by
#   `clipped_from`, a copy's original's call), so every look-up plan_runs makes by id (the call a result names, the
#   call that names a result, a copy's original) finds the same message whether the region is planned alone or in
#   the view, and no result outside is paired, left unpaired or found irregular otherwise;
# - no id is in the view twice, no system message is among the changed ones or after them, neither view is irregular,
#   and while caching every mark outside the region stays on the same block (else lay_out places them).
# The references are counted once for a measured view (Refs) and carried to the spliced one by what changed.
# tests/core/request/test_count_splice.py holds the count equal to a cold count over random sequences of edits,
# inserts, removals and clips, under every policy.

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import accumulate, islice
from operator import attrgetter
from typing import Any

from foldscope.core.model import shared_start as _shared
from foldscope.core.model.session import FullRecord, Message
from foldscope.core.model.shared_start import Shared
from foldscope.core.request.bodies import original_of
from foldscope.core.request.compile import IncludedRound
from foldscope.core.request.count_step import Laid, closed_run, start_of
from foldscope.core.request.plan import ROLE, BlockSpec, anchors, flat_marks, plan_flat

# The least shared end worth a splice, in messages (lay_out re-plans a shorter one as cheaply), and the least share of
# the view it must be for a view's Refs to be counted (they cost a pass over the view). Read at each call, so tests can
# splice the short views they draw (splicing_short_views).
SPLICE_MIN = 16
REFS_SHARE = 8


@contextmanager
def splicing_short_views() -> Iterator[None]:
    """Splice wherever the views share an end of one message or more while inside (for tests)."""
    global SPLICE_MIN, REFS_SHARE
    saved = SPLICE_MIN, REFS_SHARE
    SPLICE_MIN, REFS_SHARE = 1, 10**9
    try:
        yield
    finally:
        SPLICE_MIN, REFS_SHARE = saved


@dataclass
class Refs:
    """A view's references by id, counted once: every message by its id, and how often each id is named."""

    by_id: dict[str, Message]
    named: dict[str, int]  # an id -> how many times the view's messages name it (names_of)
    sources: dict[str, int]  # a copy's original's id -> how many of the view's copies stand for it


def names_of(m: Message, record: FullRecord | None, by_id: dict[str, Message]) -> tuple[list[str], list[str]]:
    """(the ids a message goes by, the ids it names) as plan_runs reads them: a result by its own id and, a copy, its
    original's; it names its call, its original and its original's call; a call names its result."""
    kind = m.kind
    if kind == "action_response":
        goes_by, names = [m.id], []
        c = m.content.get("action_request_id")
        if type(c) is str:
            names.append(c)
        src = m.clipped_from
        if isinstance(src, str):
            names.append(src)
            source = original_of(m, record, by_id)
            if source is not m:
                goes_by.append(source.id)
                c = source.content.get("action_request_id")
                if type(c) is str:
                    names.append(c)
        return goes_by, names
    if kind == "action_request":
        r = m.content.get("action_response_id")
        return [m.id], [r] if type(r) is str else []
    return [m.id], []


def refs_of(messages: Iterable[Message], record: FullRecord | None) -> Refs | None:
    """A view's Refs; None when an id is in it twice (a splice is never tried then)."""
    messages = list(messages)
    by_id = {m.id: m for m in messages}
    if len(by_id) != len(messages):
        return None
    named: dict[str, int] = {}
    sources: dict[str, int] = {}
    for m in messages:
        if m.kind == "action_response" or m.kind == "action_request":
            goes_by, names = names_of(m, record, by_id)
            for n in names:
                named[n] = named.get(n, 0) + 1
            for s in goes_by[1:]:
                sources[s] = sources.get(s, 0) + 1
    return Refs(by_id, named, sources)


def common_end(a: Sequence[Message], b: Sequence[Message], limit: int) -> int:
    """How many trailing items two sequences share (the same objects), at most `limit`: compared a chunk at a time, the
    chunk doubling while they match and halving where they part."""
    na, nb = len(a), len(b)
    lo, step = 0, 16
    while lo < limit:
        hi = min(limit, lo + step)
        if a[na - hi : na - lo] == b[nb - hi : nb - lo]:  # lists of messages, which compare by identity (eq=False)
            lo, step = hi, step * 2
        elif hi - lo == 1:
            break
        else:
            step = max(1, (hi - lo) // 2)
    return lo


@dataclass
class Splice:
    """A view laid out from a measured one by a splice: `laid` holds its blocks, keys, marks and the parts before the
    region; the counter counts the region's blocks (from laid.kept, `count` of them) and appends `after`, the measured
    view's parts from the right cut on."""

    laid: Laid
    count: int
    after: tuple

    def close(self) -> None:
        """After the counter counted the region's blocks: base's parts from the right cut on appended, the running
        count at the end of each whole chunk from there on (base's parts summed in C), and the total."""
        laid, after = self.laid, self.after
        at = laid.kept + self.count
        laid.parts = laid.parts.grown(at, after)
        upto = list(accumulate(map(_tokens_of, after), initial=laid.total))
        edge = ((at >> _shared.SHIFT) + 1 << _shared.SHIFT) - 1
        laid.cum = laid.cum.grown(len(laid.cum), [upto[e - at + 1] for e in range(edge, at + len(after), _shared.CHUNK)])
        laid.total = upto[-1]


_tokens_of = attrgetter("tokens")


def spliced(
    base: Laid,
    messages: Sequence[Message],
    p: int,
    inputs: tuple,
    serial: int,
    *,
    record: FullRecord | None,
    tools: list | None,
    first_round: IncludedRound | None,
    caching: bool,
    keys_of: Callable[[Any, Iterable[BlockSpec]], list],
) -> Splice | None:
    """`messages` laid out from `base`, which shares its first `p` messages, by re-planning only the runs around where
    they differ (see the module's comment); None when that is not exact or not worth it (lay_out's way then)."""
    nb, nv = len(base.messages), len(messages)
    if base.irregular or base.inputs != inputs or p >= nb or p >= nv:
        return None
    s = common_end(base.messages, messages, min(nb, nv) - p)
    if s < SPLICE_MIN or base.refs is False or (base.refs is None and REFS_SHARE * s < nb):
        return None  # too short to gain, or its refs would cost more than re-planning
    start = start_of(base, p)  # None when a system message is among the old middle or the shared end
    if start is None:
        return None
    mid = list(islice(messages.since(p), nv - s - p)) if isinstance(messages, Shared) else list(messages[p : nv - s])
    if any(m.kind == "system" for m in mid):
        return None
    q, cut, k = start
    at = closed_run(base, q, cut, messages[p])
    if at is not None:
        cut, k = q, at
    seq, aruns = base.seq, base.aruns
    r_b = q + (nb - s - p)  # where the shared end starts in base's seq
    found = _right_cut(base, r_b, mid[-1] if mid else seq[q - 1] if q > 0 else None)
    if found is None:
        return None
    i, right, f_b = found
    old_region = list(islice(seq.since(cut), right - cut))
    region = old_region[: q - cut] + mid + old_region[r_b - cut :]
    refs = base.refs
    if refs is None:
        refs = base.refs = refs_of(base.messages, record) or False
    if refs is False:
        return None
    changes = _changes(refs, old_region, region, record)
    if changes is None:
        return None
    region_flat, region_roles, region_aruns, irregular = plan_flat(region, {m.id: m for m in region}, record, cut, k)
    if irregular:
        return None
    d_flat = k + len(region_flat) - f_b
    if len(base.flat) + d_flat == 0 or not base.flat:
        return None  # the head's glue names whether any block follows it
    notes: list[int] = []
    ends: list[int] = []
    members: list[int] = []
    marked: dict[int, tuple[str, str]] = {}
    if caching and inputs[6]:
        placed = _placed(base, region_flat, k, f_b, first_round, bool(tools))
        if placed is None:
            return None
        notes, ends, members, marked, region_flat = placed
    kept = max(k - 1, 0)
    flat = base.flat.grown(k, region_flat + list(base.flat.since(f_b)))
    roles = base.roles.grown(k, region_roles + list(base.roles.since(f_b)))
    count = k - kept + len(region_flat)
    keys = base.keys.grown(kept, keys_of(record, islice(flat.since(kept), count)) + list(base.keys.since(f_b)))
    shifted = [(a + nv - nb, b + d_flat) for a, b in aruns.since(i)]
    view = messages if isinstance(messages, Shared) else base.messages.grown(p, messages[p:])
    laid = Laid(
        serial, inputs, view, seq.grown(cut, region + list(seq.since(right))), base.system,
        aruns.grown(aruns.bisect_left((cut,)), region_aruns + shifted), flat, roles, keys,
        base.parts.grown(kept), base.cum.grown(kept >> _shared.SHIFT), notes, ends, members, marked, base.head, base.stable,
        kept, base.serial,
    )  # fmt: skip
    laid.refs = _carried(refs, changes)
    return Splice(laid, count, tuple(base.parts.since(f_b)))


def _right_cut(base: Laid, r_b: int, before: Message | None) -> tuple[int, int, int] | None:
    """The right cut: the first assistant run of base starting at seq position r_b or later, where a user message comes
    before it in both views, as (its place among base.aruns, its seq position, its flat position); None if there is
    none. `before` is the message before r_b in the new view (the last new one, or the shared start's last): an
    assistant one goes on into a run starting at r_b, so the cut is the next run's start then."""
    aruns, seq = base.aruns, base.seq
    joined = before is not None and ROLE[before.kind] != "user"
    i = aruns.bisect_left((r_b,))
    while i < len(aruns):
        right, f_b = aruns[i]
        if (right == 0 or ROLE[seq[right - 1].kind] == "user") and not (joined and right == r_b):
            return i, right, f_b
        i += 1
    return None


def _placed(base: Laid, region_flat: list[BlockSpec], k: int, f_b: int, first_round: IncludedRound | None, tools: bool):
    """While caching, the marks over the spliced view: (notes, ends, members, marked, the region's blocks marked), the
    region's anchors its own and every other mark on the same block as in base; None when a mark outside the region
    would move (a note put in takes the newest note's mark) or the stable one changes."""
    d_flat = k + len(region_flat) - f_b
    t_notes, t_ends, t_members = anchors(region_flat, first_round, k)
    notes = [x for x in base.notes if x < k] + t_notes + [x + d_flat for x in base.notes if x >= f_b]
    ends = [x for x in base.ends if x < k] + t_ends + [x + d_flat for x in base.ends if x >= f_b]
    members = [x for x in base.members if x < k] + t_members + [x + d_flat for x in base.members if x >= f_b]
    stable, marked = flat_marks(len(base.flat) + d_flat, any(m.text for m in base.system) or tools, notes, ends, members)
    if stable != base.stable:
        return None
    end = k + len(region_flat)
    outside = {x: v for x, v in marked.items() if x < k or x >= end}
    if outside != {x if x < k else x + d_flat: v for x, v in base.marked.items() if x < k or x >= f_b}:
        return None
    region_flat = [spec.marked(marked[x][0]) if x in marked else spec for x, spec in enumerate(region_flat, k)]
    return notes, ends, members, marked, region_flat


def _changes(refs: Refs, old_region: list[Message], region: list[Message], record: FullRecord | None) -> tuple | None:
    """The region's references, old and new, when nothing outside it names a message inside it and nothing inside
    names one outside it (the module's comment); None else. Outside is the view less old_region (the same messages in
    both views)."""
    by_id = refs.by_id
    old_ids = {m.id for m in old_region}
    new_by_id = {m.id: m for m in region}
    if len(new_by_id) != len(region):
        return None
    old_named: dict[str, int] = {}
    old_sources: dict[str, int] = {}
    old_goes: list[str] = []
    for m in old_region:
        goes_by, names = names_of(m, record, by_id)
        old_goes += goes_by
        for n in names:
            old_named[n] = old_named.get(n, 0) + 1
        for x in goes_by[1:]:
            old_sources[x] = old_sources.get(x, 0) + 1
    new_named: dict[str, int] = {}
    new_sources: dict[str, int] = {}
    new_goes: list[str] = []
    for m in region:
        if m.id not in old_ids and m.id in by_id:
            return None  # an id outside the region, now in it too
        goes_by, names = names_of(m, record, new_by_id)
        new_goes += goes_by
        for n in names:
            if (n in by_id and n not in old_ids) or refs.sources.get(n, 0) > old_sources.get(n, 0):
                return None  # names a message outside, or the original a copy outside stands for
            new_named[n] = new_named.get(n, 0) + 1
        for x in goes_by[1:]:
            new_sources[x] = new_sources.get(x, 0) + 1
    named = refs.named
    for x in old_goes + new_goes:
        if named.get(x, 0) > old_named.get(x, 0):
            return None  # named from outside
    return old_region, region, old_named, old_sources, new_named, new_sources


def _carried(refs: Refs, changes: tuple) -> Refs:
    """The spliced view's Refs: base's less the old region's, plus the new region's."""
    old_region, region, old_named, old_sources, new_named, new_sources = changes
    by_id = dict(refs.by_id)
    for m in old_region:
        del by_id[m.id]
    for m in region:
        by_id[m.id] = m
    return Refs(by_id, _moved(refs.named, old_named, new_named), _moved(refs.sources, old_sources, new_sources))


def _moved(counts: dict[str, int], less: dict[str, int], more: dict[str, int]) -> dict[str, int]:
    out = dict(counts)
    for x, n in less.items():
        left = out[x] - n
        if left:
            out[x] = left
        else:
            del out[x]
    for x, n in more.items():
        out[x] = out.get(x, 0) + n
    return out
