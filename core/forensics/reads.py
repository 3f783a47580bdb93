"""An implicit prompt cache explained: each request's read share, and what broke the read where it fell short.

A format whose declaration says `cache="implicit"` (core.formats.spec) reports reads only: the provider caches
every prompt's prefix by itself and bills no write (Gemini's implicit caching, ai.google.dev/gemini-api/docs/caching;
OpenAI's automatic prompt caching, platform.openai.com/docs/guides/prompt-caching). There is no write to put down
to a cause; what can be explained is a read that fell short. The request before had sent P tokens (its reported
input; this request's own, when that is smaller), so this request could read up to P of its own prefix. Of the
shortfall [R, P), R its reported read, the positions are read in the order of DESIGN.md's `cache cause`, the same
words as a write's:

- `rewrite`: past the place D where this request's bytes part from the one before (core.request.prefix.place,
  the request panel's; position 0 on a model switch): the changed text could not be read;
- `expired` / `provider`: before D, an unchanged prefix not read: `expired` when the idle gap since the request
  before passed the shortest lifetime the providers document (five minutes: OpenAI keeps a prefix 5 to 10 minutes
  idle, Gemini documents none and asks for requests "in a short amount of time"), else `provider` (implicit caching
  is best effort, and a provider caches at its own granularity: OpenAI in 128-token steps);
- `unexplained`: an unchanged prefix not read when the file has no time.

An unchanged prefix left unread by less than one 128-token step is the provider's granularity, and one shorter than
1,024 tokens is below every provider's minimum: neither is a break.

The spans partition [R, P) where R < P, so a request's causes sum exactly to its shortfall.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from foldscope.core.forensics.causes import Rewrite, gaps, rewrite_of
from foldscope.core.forensics.trace_pass import Measured
from foldscope.core.model.cost import LIFETIME_SECONDS
from foldscope.core.model.session import Session, Usage

BREAKS = ("rewrite", "expired", "provider", "unexplained")  # what broke a read prefix, as DESIGN.md's causes name it
IMPLICIT_LIFETIME = LIFETIME_SECONDS["5m"]
# An unchanged prefix left unread by less than this is the provider's granularity, not a break: OpenAI caches in
# 128-token steps (platform.openai.com/docs/guides/prompt-caching); Gemini documents no step, so the same one.
STEP = 128
# The shortest prefix the providers cache at all (OpenAI 1,024 tokens; Gemini 1,024 to 4,096 by model): an unchanged
# prefix shorter than this was never cached, and leaving it unread breaks nothing.
MIN_PREFIX = 1024


@dataclass(frozen=True)
class ReadRow:
    """One recorded request under an implicit cache: what it read of the prefix the request before had sent."""

    index: int
    usage: Usage | None
    gap_s: float | None  # seconds since the previous request
    prefix: int | None  # P: the previous reported request's input, the most it could read (None: the first)
    broke: dict[str, int]  # the shortfall's tokens by cause (empty when the read reached the prefix)
    rewrite: Rewrite | None = None

    @property
    def share(self) -> float | None:
        """The part of its reported input read from the cache."""
        if self.usage is None or not self.usage.reported_input:
            return None
        return self.usage.cache_read / self.usage.reported_input

    @property
    def short(self) -> int:
        return sum(self.broke.values())

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "share": None if self.share is None else round(self.share, 6),
            "prefix": self.prefix,
            "short": self.short,
            "broke": dict(self.broke),
        }
        if self.rewrite is not None:
            out["rewrite"] = self.rewrite.as_dict()
        return out


def read_rows(session: Session, measured: Sequence[Measured]) -> list[ReadRow]:
    """Every request's read share and, where its read fell short of the prefix before, what broke it."""
    out: list[ReadRow] = []
    last = None  # the latest request that reported usage
    padded = list(measured) + [None] * (len(session.trace) - len(measured))
    for request, m, gap in zip(session.trace, padded, gaps(session.trace)):
        u = request.usage
        if u is None or last is None or last.usage is None:
            out.append(ReadRow(request.index, u, gap, None, {}))
            last = request if u is not None else last
            continue
        prefix = min(last.usage.reported_input, u.reported_input)  # a shorter request cannot read past its own end
        rewrite = rewrite_of(request, last, m)
        since = None if request.at is None or last.at is None else max(0.0, request.at - last.at)
        broke = _broke(u.cache_read, prefix, prefix if rewrite is None else min(rewrite.position, prefix), since)
        out.append(ReadRow(request.index, u, gap, prefix, broke, rewrite if broke.get("rewrite") else None))
        last = request
    return out


def _broke(read: int, prefix: int, parted: int, since: float | None) -> dict[str, int]:
    """The shortfall [read, prefix) split at the parting: unchanged before it, changed after it."""
    out: dict[str, int] = {}
    if parted - read >= STEP and parted >= MIN_PREFIX:
        unchanged = "unexplained" if since is None else "expired" if since > IMPLICIT_LIFETIME else "provider"
        out[unchanged] = parted - read
    if prefix > max(read, parted):
        out["rewrite"] = prefix - max(read, parted)
    return out


def read_totals(rows: Sequence[ReadRow]) -> dict[str, Any]:
    """The session's reads: tokens read of the reported input, the share, and the shortfall by cause."""
    read = sum(r.usage.cache_read for r in rows if r.usage is not None)
    sent = sum(r.usage.reported_input for r in rows if r.usage is not None)
    broke = dict.fromkeys(BREAKS, 0)
    for row in rows:
        for cause, n in row.broke.items():
            broke[cause] += n
    return {
        "read": read,
        "input": sent,
        "share": round(read / sent, 6) if sent else None,
        "short": sum(broke.values()),
        "broke": broke,
        "requests_short": sum(1 for r in rows if r.short),
    }
