"""The unseen head as screens word it: one figure per run of requests that carried the same head.

The head is estimated per stretch between compactions (core.request.trace.unseen_heads), so a session that
compacted carries more than one; a summary that names one figure for "every request" would contradict the
composition of a request from another stretch.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

HOW = "estimated per stretch between compactions: the smallest gap between reported input and the count"


def head_runs(heads: Sequence[int]) -> list[tuple[int, int, int]]:
    """(first request, last request, head) for each run of consecutive requests carrying the same unseen head."""
    runs: list[tuple[int, int, int]] = []
    first = 0
    for head, run in groupby(heads):  # a run's length counted in C: the status bar's tooltip asks at every step
        last = first + len(list(run)) - 1
        runs.append((first, last, head))
        first = last + 1
    return runs


def unseen_head_words(heads: Sequence[int], fmt: str) -> str:
    """The unseen head of each request run in one sentence ("" when no request carried one)."""
    runs = [r for r in head_runs(heads) if r[2]]
    if not runs:
        return ""
    what = f"the system prompt and tools this {fmt} file does not hold"
    if len(runs) == 1 and runs[0][:2] == (0, len(heads) - 1):
        return f"{runs[0][2]:,} tokens every request carried ({what}), {HOW}"
    spans = "; ".join(
        f"{head:,} tokens for request {first}" if first == last else f"{head:,} tokens for requests {first}–{last}"
        for first, last, head in runs
    )
    return f"{spans} ({what}), {HOW}"
