"""The free context window: the window less the request's predicted input, the one figure every screen calls free."""

from __future__ import annotations


def free_window(window: int | None, predicted: int | None) -> int | None:
    """The window less the request's predicted input (the forecast of what the provider counts, not the estimate),
    never below 0; None when the window or the prediction is not known. The status bar, the request panel, the
    Composition, the report and `inspect` all show this figure."""
    if window is None or not predicted:
        return None
    return max(window - predicted, 0)


def over_window(window: int | None, predicted: int | None) -> int | None:
    """How far the request's predicted input is past the window (what a free figure of 0 would hide); None when it
    fits or either is not known. Every screen that shows free space says this instead where it is positive."""
    if window is None or not predicted or predicted <= window:
        return None
    return predicted - window


def free_words(window: int, predicted: int | None) -> str:
    """The free space in words: `free N of the W-token context window`, or `over the W-token context window by N`
    where the predicted input is past it (as the ceiling's line says `over by N`), never `free 0`."""
    over = over_window(window, predicted)
    if over is not None:
        return f"over the {window:,}-token context window by {over:,}"
    return f"free {free_window(window, predicted) or 0:,} of the {window:,}-token context window"
