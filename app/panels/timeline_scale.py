"""The timeline's vertical scale: fitted to the bars and dots when the rules stand far above them, those rules named at the top."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# A rule more than this many times the largest bar or dot leaves the scale: on a scale up to it the bars would be
# a few pixels tall (an Aider run of 5k-token requests under a 200,000-token ceiling drew flat lines).
FAR = 4.0
ROOM = 1.08  # headroom over the highest value the scale holds


@dataclass(frozen=True)
class Scale:
    """The value at the plot's top edge, and the rules above it (drawn as a label at the top, not as a line)."""

    top: float
    above: tuple[str, ...] = ()


def timeline_scale(largest: int, rules: Mapping[str, int], band: float = 0.0) -> Scale:
    """The scale for bars and dots up to `largest` under these rules (name: value): every rule held when none is more
    than FAR times the largest, else only the ones that are not, the top raised so the highest value stays under
    the `band` (a share of the plot's height) that the labels of the rules above take."""
    largest = max(largest, 1)
    held = [value for value in rules.values() if value <= FAR * largest]
    top = max([largest, *held]) * ROOM
    above = tuple(name for name, value in rules.items() if value > top)
    return Scale(top / (1 - min(band, 0.5)) if above else top, above)


def above_label(name: str, value: int) -> str:
    """A rule above the scale, named short at its top edge (three share the band with the folds' labels); the
    arrow says it is above the scale, not at it."""
    return f"{'price tier' if name == 'tier' else name} {value:,} ↑"


def nice_ticks(maximum: float, count: int = 4) -> list[int]:
    """Round axis values (1, 2 or 5 times a power of ten) from 0 up to about `maximum`."""
    if maximum <= 0:
        return [0]
    raw = maximum / count
    power = 10 ** (len(str(int(raw))) - 1) if raw >= 1 else 1
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return list(range(0, int(maximum) + 1, step))
