"""The cache model held against reality: modelled against reported cache reads and writes, request by request."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from foldscope.core.model.providers import is_openai_model
from foldscope.core.model.session import Session
from foldscope.core.replay.cache_model import CacheRules, Layout, Mark, PrefixCache
from foldscope.core.replay.layouts import LOOKBACK, Layouts, model_name, with_hidden_head
from foldscope.core.request.measure import Measure


@dataclass(frozen=True)
class CheckRow:
    request: int
    reported_input: int
    modelled_input: int
    reported_read: int
    modelled_read: int
    reported_write: int
    modelled_write: int


@dataclass
class CacheCheck:
    """Per request and overall error of the `recorded` replay's cache figures against the reported ones.

    Our counts are o200k and the provider's are its own, and a source such as Claude Code sends a system
    prompt and tools the file does not hold, so positions are mapped to reported units by the fit
    reported_input = offset + scale * counted (least squares over the trace); `offset` is modelled as one
    hidden block at the head of every request, carrying the stable mark.
    """

    offset: float
    scale: float
    mode: str
    rows: list[CheckRow] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        rows = self.rows
        reported = sum(r.reported_input for r in rows) or 1
        rep_read, mod_read = sum(r.reported_read for r in rows), sum(r.modelled_read for r in rows)
        rep_write, mod_write = sum(r.reported_write for r in rows), sum(r.modelled_write for r in rows)
        hits = sum((r.reported_read > 0) == (r.modelled_read > 0) for r in rows)
        # requests where the provider read past half the request: the prefix rule itself is on trial
        deep = [r for r in rows if r.reported_read > r.reported_input / 2]
        deep_input = sum(r.reported_input for r in deep) or 1
        # requests the model reads deeply and the provider did not: misses the positional rule cannot
        # see (eviction, routing), counted rather than hidden
        misses = sum(r.modelled_read > r.modelled_input / 2 and r.reported_read <= r.reported_input / 2 for r in rows)
        return {
            "requests": len(rows),
            "mode": self.mode,
            "offset": round(self.offset),
            "scale": round(self.scale, 4),
            "reported_read": rep_read,
            "modelled_read": mod_read,
            "reported_write": rep_write,
            "modelled_write": mod_write,
            # absolute per-request error as a share of all reported input
            "read_error": round(sum(abs(r.modelled_read - r.reported_read) for r in rows) / reported, 4),
            "write_error": round(sum(abs(r.modelled_write - r.reported_write) for r in rows) / reported, 4),
            "input_error": round(sum(abs(r.modelled_input - r.reported_input) for r in rows) / reported, 4),
            "hit_agreement": round(hits / len(rows), 4) if rows else None,
            "deep_hits": len(deep),
            "read_error_on_deep_hits": round(sum(abs(r.modelled_read - r.reported_read) for r in deep) / deep_input, 4),
            "write_error_on_deep_hits": round(sum(abs(r.modelled_write - r.reported_write) for r in deep) / deep_input, 4),
            "provider_misses": misses,
        }

    def as_dict(self) -> dict[str, Any]:
        return {"summary": self.summary(), "rows": [asdict(r) for r in self.rows]}


def fit(points: list[tuple[int, int]]) -> tuple[float, float]:
    """Least-squares offset and scale of reported on counted; the offset never below zero."""
    n = len(points)
    if not n:
        return 0.0, 1.0
    sx = sum(c for c, _ in points)
    sy = sum(r for _, r in points)
    sxx = sum(c * c for c, _ in points)
    sxy = sum(c * r for c, r in points)
    den = n * sxx - sx * sx
    if n > 1 and den > 0:
        scale = (n * sxy - sx * sy) / den
        offset = (sy - scale * sx) / n
        if offset >= 0 and scale > 0:
            return offset, scale
    return 0.0, (sxy / sxx if sxx else 1.0)


def check_cache(session: Session, measure: Measure | None = None) -> CacheCheck | None:
    """Replay the recorded views through the cache model and compare with the reported usage; None
    when the session reports no usage. `measure` names the model (default: the session's)."""
    measure = measure or Measure(session)
    requests = [(r, u) for r in session.trace if (u := r.usage) is not None]
    if not requests:
        return None
    layouts = Layouts(measure, head=0)  # the fit below stands for the hidden head
    views = [[session.record.get(mid) for mid in r.view] for r, _ in requests]
    counted = [layouts.measurement(v).count for v in views]
    offset, scale = fit([(c, u.reported_input) for c, (_, u) in zip(counted, requests)])
    rules = CacheRules.openai() if is_openai_model(model_name(measure)) else CacheRules.anthropic()
    stable = "1h" if any(u.cache_write_1h for _, u in requests) else "5m"
    cache, check, tail = PrefixCache(rules), CacheCheck(offset, scale, rules.mode), None
    for (r, u), view in zip(requests, views):
        layout = hidden_head_layout(layouts.blocks(view), offset, scale, stable, tail, r.at)
        tail = layout.keys[-1] if layout.keys else None
        out = cache.step(layout)
        check.rows.append(CheckRow(r.index, u.reported_input, out.tokens, u.cache_read, out.read, u.cache_write, out.write))
    return check


def hidden_head_layout(blocks, offset: float, scale: float, stable: str, previous_tail, at) -> Layout:
    """The recorded request behind one hidden block of `offset` tokens, in reported units, marked as the
    source marks it: the stable head and the tail, plus the lookback mark when a turn ran past it."""
    block_keys, block_ends, total = [], [], 0
    for key, tokens in blocks:
        total += tokens
        block_keys.append(key)
        block_ends.append(round(offset + total * scale))
    keys, ends = with_hidden_head(block_keys, block_ends, round(offset) if offset >= 1 else 0)
    if not keys:
        return Layout((), (), (), at)
    last = len(keys) - 1
    marks = {last: "5m"}
    if offset >= 1:
        marks.setdefault(0, stable)
    if previous_tail is not None and previous_tail in keys:
        at_block = keys.index(previous_tail)
        if last - at_block > LOOKBACK:
            marks.setdefault(at_block, "5m")
    return Layout(tuple(keys), tuple(ends), tuple(Mark(b, marks[b]) for b in sorted(marks)), at)
