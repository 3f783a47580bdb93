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


def test_a_bar_holds_its_blocks_in_eight_bytes_each_and_lays_them_out_as_a_list_would():
    """The full record's bar lives as long as the session is shown: its numbers are typed arrays (8 bytes a block
    each) and its indexes a range, not lists of Python ints and floats (32-36), and each left is the running sum a
    list's would be."""
    import tracemalloc
    from itertools import accumulate

    blocks = 20_000
    widths = [0.1 + (n % 97) / 7 for n in range(blocks)]
    tracemalloc.start()
    try:
        bar = Bar.laid(range(1000, 1000 + blocks), widths, 100.0, 8.0, False)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 20 * blocks, held  # two arrays of floats and a range (16 a block); a list of floats alone is 32
    assert list(bar.lefts) == list(accumulate(widths, initial=100.0)) and list(bar.widths) == widths
    assert list(bar.indexes) == list(range(1000, 1000 + blocks)) and bar.position_of(1005) == 5
