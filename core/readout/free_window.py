"""The free context window: the window less the request's predicted input, the one figure every screen calls free."""

from __future__ import annotations


def free_window(window: int | None, predicted: int | None) -> int | None:
    """The window less the request's predicted input (the forecast of what the provider counts, not the estimate),
    never below 0; None when the window or the prediction is not known. The status bar, the request panel, the
    Composition, the report and `inspect` all show this figure."""
    if window is None or not predicted:
        return None
    return max(window - predicted, 0)
