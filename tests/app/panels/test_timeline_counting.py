"""While a load measures the trace, the timeline's paint costs the plot's width, not the number of requests, and
draws each pixel column as tall as the tallest count in it (issue 17: the GUI worker's timeline filled in)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.app.panels import timeline_counting, timeline_paint
from foldscope.app.panels.timeline import Timeline
from foldscope.app.panels.timeline_counting import CountingColumns, counting_top
from foldscope.app.panels.timeline_paint import BAR_MIN
from foldscope.app.qt import QPainter, QPointF, QRectF
from foldscope.core.formats.demo import generate
from foldscope.core.readout.opening import first_document


@settings(max_examples=200, deadline=None)
@given(counts=st.lists(st.integers(0, 10**6), max_size=400), columns=st.integers(1, 120), cuts=st.lists(st.integers(0, 400), max_size=6))
def test_each_column_is_the_tallest_count_it_covers_however_the_counts_arrive(counts, columns, cuts):
    requests = len(counts)
    made = CountingColumns(columns, requests, [0] * requests)
    for cut in sorted(cuts) + [requests]:  # the counts so far, in the pieces a load hands them over in
        made.fold(counts[: min(cut, requests)])
    if requests <= columns:  # one bar per request
        assert made.per_request and made.tallest == counts
    else:
        covered: dict[int, int] = {}
        for k, count in enumerate(counts):
            column = int(k * columns / requests)
            covered[column] = max(covered.get(column, 0), count)
        assert made.tallest == [covered.get(c, 0) for c in range(columns)]
    assert made.most_counted == max(counts, default=0)


@settings(max_examples=100, deadline=None)
@given(reported=st.lists(st.integers(0, 10**6), min_size=1, max_size=400), columns=st.integers(1, 120))
def test_every_reported_input_keeps_a_dot_within_a_pixel_row(reported, columns):
    rows = 100
    made = CountingColumns(columns, len(reported), reported, rows)
    unit = max(max(reported) / rows, 1.0)
    for k, value in enumerate(reported):
        if value:
            assert any(abs(value - dot) <= unit for dot in made.dots[made.column(k)]), (k, value)
    assert all(dot in reported for dots in made.dots for dot in dots)  # nothing drawn that was not reported


def patch_painter(monkeypatch, painter) -> None:
    """Every painter the timeline's paint makes (the widget's, the loading layers', the counted layer's) is `painter`."""
    for module in (timeline_counting, timeline_paint):
        monkeypatch.setattr(module, "QPainter", painter)


class CountingPainter(QPainter):
    """QPainter that counts the shapes a paint asks for."""

    calls = 0

    def fillRect(self, *args):  # noqa: N802 (Qt name)
        CountingPainter.calls += 1
        return super().fillRect(*args)

    def drawEllipse(self, *args):  # noqa: N802 (Qt name)
        CountingPainter.calls += 1
        return super().drawEllipse(*args)


def test_a_paint_while_counting_costs_the_plots_width_not_the_number_of_requests(qtbot, monkeypatch):
    document = first_document(generate(rounds=1500, listing_chars=20), "large.json")
    requests = len(document.session.trace)
    widget = Timeline()
    qtbot.addWidget(widget)
    widget.resize(300, 160)
    widget.set_document(document)
    counts = tuple(range(1, requests + 1))
    patch_painter(monkeypatch, CountingPainter)
    widget.set_counting(counts[: requests // 2], requests)
    widget.grab()
    plot_width = widget._plot().width()
    assert requests > 3 * plot_width
    CountingPainter.calls = 0
    widget.set_counting(counts, requests)
    widget.grab()
    assert 0 < CountingPainter.calls <= 3 * plot_width, (CountingPainter.calls, requests)


def _timeline(qtbot, document) -> Timeline:
    widget = Timeline()
    qtbot.addWidget(widget)
    widget.resize(300, 160)
    widget.set_document(document)
    return widget


def test_a_timeline_filled_in_as_counts_come_paints_the_pixels_of_one_given_every_count_at_once(qtbot):
    import random

    for rounds in (40, 1500):  # one bar per request, and one bar per pixel column
        document = first_document(generate(rounds=rounds, listing_chars=20), "s.json")
        requests = len(document.session.trace)
        rng = random.Random(rounds)
        counts = [rng.randint(1, 5_000) for _ in range(requests)]
        counts[requests * 2 // 3] = 10**7  # past every reported input: the plot's top moves while it fills
        filled = _timeline(qtbot, document)
        for cut in (1, requests // 5, requests // 5 + 1, requests // 2, requests * 2 // 3 + 1, requests - 3, requests):
            filled.set_counting(tuple(counts[:cut]), requests)
            filled.grab()
        at_once = _timeline(qtbot, document)
        at_once.set_counting(tuple(counts), requests)
        assert filled.grab().toImage() == at_once.grab().toImage(), rounds


def test_a_paint_after_a_few_more_counts_draws_only_their_bars(qtbot, monkeypatch):
    document = first_document(generate(rounds=1500, listing_chars=20), "large.json")
    requests = len(document.session.trace)
    widget = _timeline(qtbot, document)
    counts = tuple(range(1, requests + 1))
    widget.set_counting(counts[: requests // 2], requests)
    widget.grab()
    patch_painter(monkeypatch, CountingPainter)
    CountingPainter.calls = 0
    widget.set_counting(counts[: requests // 2 + 10], requests)
    widget.grab()
    assert CountingPainter.calls <= 12, CountingPainter.calls  # the columns those ten counts reach, each once or twice


class RecordingPainter(QPainter):
    """QPainter that keeps the rectangles filled and the dots' centres."""

    fills: list = []
    dots: list = []

    def fillRect(self, rect, *args):  # noqa: N802 (Qt name)
        RecordingPainter.fills.append(QRectF(rect))  # a copy: the counted bars are painted through one rectangle, reset
        return super().fillRect(rect, *args)

    def drawEllipse(self, centre, *args):  # noqa: N802 (Qt name)
        RecordingPainter.dots.append(centre)
        return super().drawEllipse(centre, *args)


def test_the_counted_timeline_draws_each_bar_and_dot_where_its_slot_rectangle_puts_it(qtbot, monkeypatch):
    # The bars are laid out in numbers (one rectangle per bar): each must be the slot's rectangle less its margins.
    from foldscope.core.formats.demo import demo_path
    from foldscope.core.readout.opening import open_document

    document = open_document(demo_path(), ":memory:")
    widget = Timeline()
    qtbot.addWidget(widget)
    widget.resize(700, 200)
    widget.set_document(document)
    patch_painter(monkeypatch, RecordingPainter)
    RecordingPainter.fills, RecordingPainter.dots = [], []
    widget.grab()
    plot = widget._plot()
    top = widget._scale().top
    bars, dots = [], []
    for slot in range(widget.slots()):
        rect = widget._slot_rect(slot, plot)
        inner = rect.adjusted(max(rect.width() * 0.15, 0.5), 0, -max(rect.width() * 0.15, 0.5), 0)
        now = slot == len(document.requests)
        y = widget._y((document.now_predicted or document.now_size) if now else document.requests[slot].headline, plot, top)
        y = min(y, plot.bottom() - BAR_MIN)  # a tiny bar (request 0, before any report) kept visible
        bars.append(QRectF(inner.left(), y, inner.width(), plot.bottom() - y))
        if not now and document.requests[slot].reported_input:
            dots.append(QPointF(rect.center().x(), widget._y(document.requests[slot].reported_input, plot, top)))
    assert len(document.requests) > 5 and dots
    fills = RecordingPainter.fills
    start = fills.index(bars[0]) if bars[0] in fills else 0  # after the shade of the step shown
    assert fills[start : start + len(bars)] == bars
    assert RecordingPainter.dots[: len(dots)] == dots


def test_the_loading_plots_top_moves_in_steps_so_a_growing_count_redraws_the_plot_a_few_times(qtbot, monkeypatch):
    # Counts that grow past every reported input, as a long session's do, once moved the plot's top at every paint,
    # and each move redrew every column and dot: 102 paints of the 50k-message load cost the window's thread 4.8 s
    # while the worker counted, the two sharing one interpreter lock. The top steps through TOP_STEPS instead.
    document = first_document(generate(rounds=1500, listing_chars=20), "large.json")
    requests = len(document.session.trace)
    widget = _timeline(qtbot, document)
    most = max(r.usage.reported_input for r in document.session.trace if r.usage is not None)
    counts = tuple(most + most * 4 * k // requests for k in range(1, requests + 1))  # past every report, to 5x it
    widget.set_counting(counts[:1], requests)
    widget.grab()
    plot_width = widget._plot().width()
    patch_painter(monkeypatch, CountingPainter)
    CountingPainter.calls = 0
    paints = 60
    for n in range(1, paints + 1):
        widget.set_counting(counts[: requests * n // paints], requests)
        widget.grab()
    # The 60 paints' largest counts pass a few steps: each step redraws at most the plot's columns and dots,
    # and a paint between steps draws only the columns its new counts reach.
    steps = len({counting_top(max(counts[: requests * n // paints])) for n in range(1, paints + 1)})
    assert steps <= 20
    assert CountingPainter.calls <= (steps + 2) * 2 * plot_width, (CountingPainter.calls, steps, plot_width)
    assert all(counting_top(c) >= c * 1.08 for c in counts)  # room over the largest, always


def test_the_loading_layers_are_let_go_when_a_document_is_shown(qtbot):
    """The loading timeline's pixmaps (its bars and dots, each the widget's size) and its columns were kept after the
    counted document was shown, beside the counted layer its paint makes: about 1 MiB each at 1600x1000, at the window's
    peak. Any document shown lets them go; the next load's first paint makes them again, the same pixels."""
    from foldscope.core.readout.opening import build_document

    session = generate(rounds=60, listing_chars=20)
    first = first_document(session, "demo.json")
    requests = len(session.trace)
    widget = _timeline(qtbot, first)
    widget.set_counting(tuple(range(1, requests + 1)), requests)
    painted = widget.grab().toImage()
    assert widget._bars is not None and widget._dots is not None and widget._columns is not None  # what a load paints
    widget.set_document(build_document(session, "demo.json"))
    assert widget._bars is None and widget._dots is None and widget._columns is None
    widget.grab()  # the counted timeline's paint makes none of them
    assert widget._bars is None and widget._dots is None
    widget.set_document(first)
    widget.set_counting(tuple(range(1, requests + 1)), requests)
    assert widget.grab().toImage() == painted  # made again, the same
