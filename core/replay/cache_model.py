"""The prompt-cache model: the positional prefix rule of ADR-0127 and pi-fold, request by request."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from foldscope.core.model.cost import LIFETIME_SECONDS
from foldscope.core.model.running_sum import common_start
from foldscope.core.model.shared_start import since

if TYPE_CHECKING:
    import msgspec
else:
    from foldscope.core.model.canonical import msgspec  # imported its way (core.model.canonical._msgspec)

MODES = ("marks", "automatic", "off")


@dataclass(frozen=True)
class Mark:
    """A cache mark: the cached prefix ends after block `block`, kept for `lifetime` ("5m" or "1h")."""

    block: int
    lifetime: str = "5m"


class Layout(msgspec.Struct, frozen=True):
    """One modelled request: its blocks' identities, the token count up to the end of each, its marks, its time.

    `keys[i]` is any hashable identity of block i's content (equal content, equal key); `ends[i]` is the
    number of tokens from the start of the request to the end of block i, so `ends` never decreases. A msgspec
    Struct, frozen as a frozen dataclass and made in C (one a request a strategy).
    """

    keys: Sequence[Any]  # a tuple, or a Shared grown from the request before's (core.model.shared_start)
    ends: Sequence[int]
    marks: tuple[Mark, ...] = ()
    at: float | None = None

    def __post_init__(self) -> None:
        n = len(self.keys)  # once: the keys are often a Shared, whose len is a Python call
        if n != len(self.ends):
            raise ValueError("a layout needs one token end per block")
        for m in self.marks:
            if not 0 <= m.block < n:
                raise ValueError(f"mark on block {m.block} of a {n}-block request")
            if m.lifetime not in LIFETIME_SECONDS:
                raise ValueError(f"unknown mark lifetime {m.lifetime!r}")

    @property
    def tokens(self) -> int:
        return self.ends[-1] if self.ends else 0

    def position(self, block: int) -> int:
        """Tokens up to the end of `block`; -1 stands for the empty prefix."""
        return self.ends[block] if block >= 0 else 0


@dataclass(frozen=True)
class CacheRules:
    """How a provider caches. `marks`: explicit marks (Anthropic); `automatic`: every prefix (OpenAI); `off`."""

    mode: str = "marks"
    max_marks: int = 4
    min_tokens: int = 1024  # a mark whose prefix is shorter is not cached, without error
    lookback: int | None = 20  # blocks before a mark where a hit is still found; None for no limit
    step: int = 128  # automatic caching reads in steps of this many tokens ...
    auto_min: int = 1024  # ... from this many
    auto_lifetime: str = "5m"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown cache mode {self.mode!r}; expected one of {', '.join(MODES)}")

    @classmethod
    def anthropic(cls, min_tokens: int = 1024) -> CacheRules:
        return cls(mode="marks", min_tokens=min_tokens)

    @classmethod
    def openai(cls) -> CacheRules:
        return cls(mode="automatic")

    @classmethod
    def off(cls) -> CacheRules:
        return cls(mode="off")


class CacheOutcome(msgspec.Struct, frozen=True, gc=False):
    """What one request read, wrote and sent fresh, and how its prefix relates to the previous request's (a msgspec
    Struct, frozen, made in C: one a request a strategy)."""

    tokens: int
    read: int
    write_5m: int
    write_1h: int
    shared: int  # tokens of the longest common block prefix with the previous request
    change: str  # "first", "append" (the previous request is a prefix of this one) or "rewrite"
    rewritten: int = 0  # tokens of the previous request after the point where this one diverged

    @property
    def write(self) -> int:
        return self.write_5m + self.write_1h

    @property
    def fresh(self) -> int:
        return self.tokens - self.read - self.write


def chain_keys(keys: Sequence) -> list[int]:
    """Prefix identities: chain[i] names blocks 0..i together, so equal chains mean equal prefixes."""
    out: list[int] = []
    h = 0
    for k in keys:
        h = hash((h, k))
        out.append(h)
    return out


def common_blocks(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading blocks two chained layouts share."""
    n = min(len(a), len(b))
    if n and a[n - 1] == b[n - 1]:
        return n
    lo, hi = 0, n  # chains agree on a prefix and then never again: binary search the boundary
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] == b[mid]:
            lo = mid + 1
        else:
            hi = mid
    return lo


def automatic_read(common: int, rules: CacheRules) -> int:
    """Tokens an automatic cache reads of a common prefix: nothing under auto_min, then whole steps."""
    if common < rules.auto_min:
        return 0
    return rules.auto_min + (common - rules.auto_min) // rules.step * rules.step


@dataclass
class PrefixCache:
    """The provider's cache as the trace goes: entries keyed by prefix identity, each with its expiry.

    The last request's chain is one list, the cache's own, cut back and grown in place each request (a request's
    chain is read only until the next one's is made): a request costs what it changed, and every read of the chain
    in the mark search is a list's, in C."""

    rules: CacheRules = field(default_factory=CacheRules)
    entries: dict[int, tuple[float, str]] = field(default_factory=dict)  # chain -> (expiry, lifetime)
    _chain: list[int] = field(default_factory=list)  # the last request's prefix identities (chain_keys of its keys)
    _previous: Layout | None = None  # the last request

    def _live(self, chain: int, at: float | None) -> bool:
        entry = self.entries.get(chain)
        return entry is not None and (at is None or entry[0] >= at)

    def _renew(self, chain: int, at: float | None, lifetime: str) -> None:
        expiry = float("inf") if at is None else at + LIFETIME_SECONDS[lifetime]
        old = self.entries.get(chain)
        if old is not None and old[0] > expiry:
            expiry, lifetime = old
        self.entries[chain] = (expiry, lifetime)

    def step(self, layout: Layout) -> CacheOutcome:
        keys = layout.keys
        chain, prev = self._chain, self._previous
        shared_blocks, change, rewritten = 0, "first", 0
        if prev is None:
            chain[:] = chain_keys(keys)
        else:
            # chain_keys(keys), hashing only from the first key that differs from the previous request's: the
            # chains agree before it, and the previous chain's rest is kept aside for common_blocks' compares
            d = common_start(prev.keys, keys, equal=True)
            was = chain[d:]
            del chain[d:]
            h = chain[d - 1] if d else 0
            append = chain.append
            for k in since(keys, d):
                h = hash((h, k))
                append(h)
            shared_blocks = _common_blocks_after(d, was, chain)
            if shared_blocks == d + len(was):
                change = "append"
            else:
                change = "rewrite"
                rewritten = prev.tokens - prev.position(shared_blocks - 1)
        self._previous = layout
        read, w5, w1 = self._cache(layout, chain)
        return CacheOutcome(layout.tokens, read, w5, w1, layout.position(shared_blocks - 1), change, rewritten)

    def _cache(self, layout: Layout, chain: list[int]) -> tuple[int, int, int]:
        mode, at = self.rules.mode, layout.at
        if mode == "off" or not chain:
            return 0, 0, 0
        if mode == "automatic":
            hit = next((b for b in range(len(chain) - 1, -1, -1) if self._live(chain[b], at)), -1)
            for c in chain:
                self._renew(c, at, self.rules.auto_lifetime)
            return automatic_read(layout.position(hit), self.rules), 0, 0
        return self._marked(layout, chain)

    def _marked(self, layout: Layout, chain: list[int]) -> tuple[int, int, int]:
        marks = layout.marks
        if len(marks) > 1:
            marks = tuple(sorted(marks, key=_block))
        if len(marks) > self.rules.max_marks:
            raise ValueError(f"{len(marks)} cache marks in one request; the provider allows {self.rules.max_marks}")
        seen_5m = False
        for m in marks:
            if m.lifetime == "1h" and seen_5m:
                raise ValueError("a one-hour mark after a five-minute mark; one-hour marks come first")
            seen_5m = seen_5m or m.lifetime == "5m"
        at, entries = layout.at, self.entries
        hit = -1
        for top, low in _latest_ranges(marks, self.rules.lookback):
            # Each candidate read from the chain alone, never the range between two marks, which may span the request:
            # the mark's own block first (where most reads hit), then the blocks before it, latest first.
            entry = entries.get(chain[top])
            if entry is not None and (at is None or entry[0] >= at):  # _live, inline
                hit = top
                break
            for b in range(top - 1, low - 1, -1):
                entry = entries.get(chain[b])
                if entry is not None and (at is None or entry[0] >= at):
                    hit = b
                    break
            if hit >= 0:
                break
        if hit >= 0:
            self._renew(chain[hit], at, entries[chain[hit]][1])
        read, ends = layout.position(hit), layout.ends
        done, writes, least = read, {"5m": 0, "1h": 0}, self.rules.min_tokens
        for m in marks:
            block, lifetime = m.block, m.lifetime
            end = ends[block]
            if end < least:
                continue  # too short to cache: its tokens go with the next mark that is cached, or fresh
            if end > done:
                writes[lifetime] += end - done
                done = end
            self._renew(chain[block], at, lifetime)
        return read, writes["5m"], writes["1h"]


def _common_blocks_after(d: int, was: Sequence[int], chain: Sequence[int]) -> int:
    """common_blocks(previous chain, chain) where the two agree on their first `d` items and the previous chain's
    items from `d` on are `was`: the same compares in the same order, each one before `d` known equal."""
    n = min(d + len(was), len(chain))
    if n and (n <= d or was[n - 1 - d] == chain[n - 1]):
        return n
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if mid < d or was[mid - d] == chain[mid]:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _block(mark: Mark) -> int:
    return mark.block


def _latest_first(marks: Sequence[Mark], lookback: int | None) -> Iterator[int]:
    """Block boundaries where a read may hit, latest first, one at a time: at each mark (sorted by block) and
    `lookback` blocks before it. Each mark's range is given below the lowest given so far, so a read that hits at
    the latest mark (the commonest case) costs one look, not a set of every candidate sorted."""
    for top, low in _latest_ranges(marks, lookback):
        yield from range(top, low - 1, -1)


def _latest_ranges(marks: Sequence[Mark], lookback: int | None) -> Iterator[tuple[int, int]]:
    """_latest_first's candidates as ranges (top, low), each read from top down to low: a caller reads a range's
    keys from the chain in one slice, not one Python index a block (up to `lookback` where a read misses)."""
    below = None  # the lowest block given so far
    for m in reversed(marks):
        low = 0 if lookback is None else max(0, m.block - lookback)
        top = m.block if below is None else min(m.block, below - 1)
        if top >= low:
            yield top, low
            below = low


def simulate(layouts: Iterable[Layout], rules: CacheRules) -> list[CacheOutcome]:
    """Run a trace of modelled requests through one cache, in order."""
    cache = PrefixCache(rules)
    return [cache.step(layout) for layout in layouts]
