"""Unseen text: a message part of N characters the file does not hold, its tokens estimated from the file's own reports.

A reader that meets text a sanitiser replaced (a Codex rollout's `[REDACTED_OUTPUT len=N sha=S]`) names each such
marker in the message's metadata, `"unseen_text": [{"marker": the marker as it stands in the text, "chars": N}]`:
the marker's own characters are no part of what the provider read, the N characters are. The count
(core.request.count) reads each part as N characters at the file's tokens per character, in place of the marker's
literal tokens. That rate comes from the file's reported input (`fit_rate`): within each stretch, a request's reported
input less the tokens of the text the file does hold grows with the unseen characters its view carries, and the
slope of that growth is the rate (the intercept is the unseen head: the system prompt and tools no file holds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from foldscope.core.model.unseen_text import unseen_parts
from foldscope.core.request.tokens import count_text

DEFAULT_TOKENS_PER_CHAR = 0.25  # about four characters a token: used until the file's reports measure its own
RATE_RANGE = (0.05, 1.0)  # tokens per character outside this is no text: the fit is not taken
MIN_SPREAD = 2_000  # unseen characters a stretch's views must differ by before its reports measure the rate


@lru_cache(maxsize=4096)
def marker_tokens(marker: str) -> int:
    """The tokens of a marker's own text: what the count of the message holds in place of the unseen text."""
    return count_text(marker)


def unseen_tokens(message: Any, rate: float) -> int:
    """What a message's unseen parts add to the count of its text as the file holds it: each part's characters at
    `rate` tokens a character, less the marker's own tokens (which stand in the file where the text stood)."""
    return sum(round(chars * rate) - marker_tokens(marker) for marker, chars in unseen_parts(message))


@dataclass(frozen=True)
class UnseenRate:
    """Tokens per unseen character, and what it rests on (said beside every figure it enters)."""

    tokens_per_char: float
    reports: int  # the reports it was fitted to; 0: the default, the file's reports could not measure it
    chars: int  # unseen characters in the record

    @property
    def measured(self) -> bool:
        return self.reports > 0

    def describe(self) -> str:
        if self.measured:
            return f"{self.tokens_per_char:.3f} tokens a character, fitted to the file's {self.reports} reported inputs"
        return f"{self.tokens_per_char:.3f} tokens a character (the default: its reports cannot measure it)"


def fit_rate(stretches: Sequence[Sequence[tuple[int, int]]]) -> tuple[float, int] | None:
    """(tokens per character, reports used) from each stretch's (unseen characters, reported input less the count of
    the text the file holds) points, in request order: the median of the steps' slopes (each step from one report to
    the next that carries more unseen characters), weighted by the characters each step adds. A median, not a
    least-squares line: one step of text far denser than the rest (a paste in another script, 0.9 tokens a
    character on a dev file) moves it no more than any other step. None when the steps add under MIN_SPREAD
    characters, or the rate is no text's."""
    steps: list[tuple[float, int]] = []
    used = 0
    for points in stretches:
        taken = False
        for (h0, y0), (h1, y1) in zip(points, points[1:]):
            if h1 > h0:
                steps.append(((y1 - y0) / (h1 - h0), h1 - h0))
                taken = True
        used += len(points) if taken else 0
    total = sum(w for _, w in steps)
    if total < MIN_SPREAD:
        return None
    steps.sort()
    run = 0
    for slope, weight in steps:
        run += weight
        if 2 * run >= total:
            return (slope, used) if RATE_RANGE[0] <= slope <= RATE_RANGE[1] else None
    return None
