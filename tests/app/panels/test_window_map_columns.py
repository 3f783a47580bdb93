"""The window map's pixel columns, found by bisection, are the ones a walk over every block finds."""

from __future__ import annotations

import math

from hypothesis import example, given, settings
from hypothesis import strategies as st

from foldscope.app.panels.window_map_blocks import BAR_HEIGHT, Bar, column_spans


def walked_columns(bar: Bar, height: float = BAR_HEIGHT) -> list[tuple]:
    """The columns as the map found them before: each block in turn, a narrow one kept while it covers its pixel
    column's centre, the last such drawn there (the reference the bisection must match)."""
    out: list[tuple] = []
    top, in_view_bar = bar.top, bar.in_view_bar
    pixel, last = None, 0
    for index, left, width in zip(bar.indexes, bar.lefts, bar.widths):
        if width >= 1.0:
            if pixel is not None:
                out.append((last, pixel, top, 1.0, height, in_view_bar, False))
                pixel = None
            out.append((index, left, top, width, height, in_view_bar, width > 3))
            continue
        at = math.ceil(left - 0.5)
        if at + 0.5 >= left + width:
            continue
        if pixel is not None and pixel != at:
            out.append((last, pixel, top, 1.0, height, in_view_bar, False))
        pixel, last = at, index
    if pixel is not None:
        out.append((last, pixel, top, 1.0, height, in_view_bar, False))
    return out


def as_tuples(columns) -> list[tuple]:
    return [(index, rect.x(), rect.y(), rect.width(), rect.height(), in_view, line) for index, rect, in_view, line in columns]


widths = st.lists(
    st.one_of(
        st.just(0.0),
        st.floats(0.0, 1.0, exclude_max=True),
        st.floats(0.0, 0.1),
        st.floats(1.0, 40.0),
        st.sampled_from([0.5, 1.0, 0.25, 3.0, 3.5]),
    ),
    max_size=300,
)


@settings(max_examples=400, deadline=None)
@given(widths, st.floats(0.0, 50.0), st.booleans())
@example([0.3, 0.3, 0.3, 1.5, 0.2, 0.9, 0.0, 0.6], 10.0, True)
@example([0.5, 0.5, 0.5, 0.5], 0.5, False)
def test_a_paint_draws_the_columns_a_walk_over_every_block_drew(block_widths, start, in_view_bar):
    bar = Bar.laid(list(range(100, 100 + len(block_widths))), block_widths, start, 7.0, in_view_bar)
    assert as_tuples(column_spans(bar)) == walked_columns(bar)
