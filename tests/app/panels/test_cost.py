"""The Cost panel: the bill by part as a bar you click into its requests, the shown request's cache cause, and
the compactions with a click that steps the timeline there."""

from __future__ import annotations

from pathlib import Path

from foldscope.app.models.cost import CompactionModel, RequestCostModel
from foldscope.app.qt import Qt
from foldscope.core.forensics.compactions import compaction_report
from foldscope.core.formats import load_session
from tests.core.forensics.traces import write_claude_code

SESSION = "claude_code/session-196820da.jsonl"


def open_cost(qtbot, window, path):
    window.show()
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(path)
    with qtbot.waitSignal(window.cost_panel.facts_ready, timeout=20_000):
        window.side_tabs.setCurrentWidget(window.cost_panel)
    from foldscope.app.worker import pool

    qtbot.waitUntil(lambda: pool().activeThreadCount() == 0, timeout=20_000)  # the load's other work done too
    return window.cost_panel


def test_the_library_models_hold_to_qts_contract(qtmodeltester, corpus_dev):
    from foldscope.app.models.cost import PartsModel, WastedModel
    from foldscope.app.panels.library_money import library_money

    result = library_money([str(corpus_dev / SESSION)])
    parts = PartsModel()
    parts.set_rows(list(result["totals"]["by_cause"].items()))
    qtmodeltester.check(parts)
    assert parts.index(1, 0).data() == "cache reads"
    wasted = WastedModel()
    wasted.set_rows(result["top_wasted"])
    qtmodeltester.check(wasted)
    assert wasted.rowCount() and wasted.index(0, 0).data() == Path(SESSION).name
    from foldscope.app.panels.library_money import UsageModel, summarise_usage

    usage = UsageModel()
    usage.set_rows(summarise_usage(result["usage_lines"], "day", forensics=False)["rows"])
    qtmodeltester.check(usage)
    assert usage.rowCount() and usage.index(0, 7).data().startswith("$")


def test_the_models_hold_to_qts_contract(qtmodeltester, corpus_dev, tmp_path):
    report = compaction_report(load_session(write_claude_code(tmp_path)))
    compactions = CompactionModel()
    compactions.set_rows(report.compactions)
    qtmodeltester.check(compactions)
    assert compactions.index(0, 0).data() == "2" and compactions.index(0, 7).data() in ("never", "after 1")
    requests = RequestCostModel()
    requests.set_rows(report.cache.rows)
    qtmodeltester.check(requests)
    assert requests.index(0, 3).data() == f"{report.cache.rows[0].causes.usage.cache_write:,}"


def test_the_bar_splits_the_bill_and_a_part_lists_the_requests_that_make_it_up(qtbot, window, corpus_dev):
    panel = open_cost(qtbot, window, corpus_dev / SESSION)
    facts = panel.facts
    assert facts.priced and abs(sum(p.usd for p in facts.parts[:9]) - facts.bill_usd) < 1e-9
    assert "$" in panel.bar_sentence.text() and "provider misses" in panel.bar_sentence.text()
    provider = facts.part("provider")
    panel.bar.resize(600, 30)
    a, b = next((a, b) for p, a, b in panel.bar.segments() if p.name == "provider")
    qtbot.mouseClick(panel.bar, qtbot_button(), pos=point((a + b) / 2, 10))
    assert [r.index for r in panel.request_model.rows] == list(provider.requests) and provider.requests
    assert panel.tabs.currentIndex() == 1 and "provider misses" in panel.requests_sentence.text()


def test_clicking_a_request_steps_the_timeline_and_says_its_cache_cause(qtbot, window, corpus_dev):
    panel = open_cost(qtbot, window, corpus_dev / SESSION)
    row = next(r for r, x in enumerate(panel.request_model.rows) if "provider" in x.causes.causes)
    wanted = panel.request_model.rows[row].index
    with qtbot.waitSignal(window.timeline.request_selected, timeout=5_000) as blocker:
        panel.requests.clicked.emit(panel.request_model.index(row, 0))
    assert blocker.args == [wanted] and window.timeline.current == wanted
    assert f"Request {wanted} read" in panel.detail.text() and "provider's miss" in panel.detail.text()


def test_a_compaction_lists_its_lost_literals_and_steps_the_timeline_there(qtbot, window, tmp_path):
    panel = open_cost(qtbot, window, write_claude_code(tmp_path))
    assert panel.compaction_model.rowCount() == 1 and panel.tabs.tabText(2) == "Compactions (1)"
    window.timeline.step_to(0)
    with qtbot.waitSignal(window.timeline.request_selected, timeout=5_000):
        panel.compactions.clicked.emit(panel.compaction_model.index(0, 0))
    assert window.timeline.current == 2
    text = panel.lost.toPlainText()
    assert "path: /repo/b.py" in text and "took the conversation from 12,606" in text
    assert "rewritten from" in panel.detail.text()


def qtbot_button():
    from foldscope.app.qt import Qt

    return Qt.MouseButton.LeftButton


def point(x: float, y: float):
    from foldscope.app.qt import QPoint

    return QPoint(int(x), int(y))


def test_the_request_panel_and_the_cost_panel_name_the_same_place_where_the_bytes_part(qtbot, window, tmp_path):
    from foldscope.core.readout.cost_facts import rewrite_place
    from tests.core.forensics.traces import write_claude_code_edit

    panel = open_cost(qtbot, window, write_claude_code_edit(tmp_path))
    rewrite = panel.facts.cache.rows[2].causes.rewrite
    assert rewrite is not None and rewrite.char  # the edited prompt shares its first words with the old one
    where = rewrite_place(rewrite)
    assert where.startswith("messages[2] (from #4), at character ")
    window.timeline.step_to(2)
    qtbot.waitUntil(lambda: "rewritten from" in panel.detail.text())
    assert f"rewritten from {where} because" in panel.detail.text()
    assert f"parts from the request before at {where}" in panel.detail.text()
    # The request panel, on the request before, says where the next one (this one) parts: the same words.
    window.side_tabs.setCurrentWidget(window.request_panel)
    window.timeline.step_to(1)
    qtbot.waitUntil(lambda: "Where the next request diverges" in window.request_panel.header.text())
    header = window.request_panel.header.text()
    assert f"parts at {where};" in header
    divergence = window.request_panel.divergence
    assert (divergence.message, divergence.index) == (rewrite.message, rewrite.index)


def test_each_legend_square_is_painted_in_its_parts_bar_colour(qtbot, window, corpus_dev):
    """New user 13: the legend's squares were black text glyphs, so the bar's colours matched no cause."""
    from foldscope.app.panels.cost import part_colour

    panel = open_cost(qtbot, window, corpus_dev / SESSION)
    shown = [p for p in panel.facts.parts if p.tokens or p.usd]
    legend = panel.legend
    legend.resize(500, legend.heightForWidth(500))
    image = legend.grab().toImage()
    places = legend.places(legend.width())
    assert [words for _, words, _ in legend.items] == [f"{p.label} {cost_money(p)}" for p in shown]
    for part, (square, _) in zip(shown, places):
        centre = square.center().toPoint()
        assert image.pixelColor(centre).name() == part_colour(part.name).name(), part.name
    assert len({part_colour(p.name).name() for p in shown}) == len(shown)  # no two parts share a colour
    assert legend.heightForWidth(200) > legend.heightForWidth(900)  # it wraps, between items


def test_provider_misses_are_explained_in_one_sentence_when_the_bill_has_them(qtbot, window, corpus_dev):
    panel = open_cost(qtbot, window, corpus_dev / SESSION)
    assert panel.facts.part("provider").usd
    text = panel.explained.text()
    assert text.startswith("Provider misses: ") and text.count(". ") == 0 and "cache" in text


def test_the_gap_charts_axis_names_its_values_and_no_two_labels_touch(qtbot, window, corpus_dev):
    """New user 13: the idle-gap chart had no axis values and its 5 min and 1 h labels crowded each other."""
    panel = open_cost(qtbot, window, corpus_dev / SESSION)
    labels = panel.gaps.axis_labels()
    words = [text for text, _ in labels]
    assert {"0 s", "5 min", "1 h"} <= set(words)
    for (_, low), (_, high) in zip(labels, labels[1:]):
        assert high.bottom() <= low.top()  # drawn bottom up, each clear of the one below
    assert all(0 <= rect.top() and rect.bottom() <= panel.gaps.height() for _, rect in labels)
    # a click on the axis is not a click on the first bar
    assert panel.gaps.request_at(panel.gaps.AXIS + 1) == panel.facts.cache.rows[0].index


def cost_money(part) -> str:
    from foldscope.app.panels.cost import _money

    return _money(part, True)


LIBRARY_FILES = (
    "claude_code/session-196820da.jsonl",
    "claude_code/tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl",
    "claude_code/tmp-private/agent-36541525.jsonl",
    "claude_code/tmp-private/agent-50243ee8.jsonl",
    "pi/pi-mono_large-session.jsonl",
    "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
)


def test_the_librarys_money_equals_foldscope_cache_on_the_folder_and_a_request_opens_there(qtbot, window, corpus_dev, tmp_path, capsys):
    import json

    from foldscope.core.cli.main import main
    from foldscope.core.store.library import Library

    folder = tmp_path / "sessions"
    folder.mkdir()
    with Library(window.db) as library:
        for name in LIBRARY_FILES:
            link = folder / name.split("/")[-1]
            link.symlink_to(corpus_dev / name)
            library.import_session(load_session(link))
    assert main(["cache", str(folder), "--json", "--workers", "1"]) == 0
    cli = json.loads(capsys.readouterr().out)
    window.show()
    window.side_tabs.setCurrentWidget(window.cost_panel)
    money = window.cost_panel.library
    window.cost_panel.tabs.setCurrentWidget(money)
    with qtbot.waitSignal(money.money_ready, timeout=60_000) as ready:
        money.button.click()
    result = ready.args[0]
    assert result["sessions"] == cli["sessions"] == 4 and cli["children_in_parents"] == 2  # subagents once
    assert result["totals"] == cli["totals"]

    def named(tops):  # the library keeps each file's resolved path; the folder run names its links
        return [{**t, "file": Path(t["file"]).name} for t in tops]

    assert named(result["top_wasted"]) == named(cli["top_wasted"]) and result["top_wasted"]
    # The table shows those figures: each part's cost as the CLI prints it.
    shown = {money.parts.index(r, 0).data(): money.parts.index(r, 2).data() for r in range(money.parts.rowCount())}
    provider = cli["totals"]["by_cause"]["provider"]["cost_usd"]
    assert shown["provider misses"] == f"${provider:,.4f}"
    assert shown["subagents"] == f"${cli['totals']['children']['subagents']['cost_usd']:,.4f}"
    assert f"${cli['totals']['total_usd']:,.4f}" in money.heading.text()
    # A click on the request that wasted most opens its session at that request.
    top = cli["top_wasted"][0]
    with qtbot.waitSignal(window.document_loaded, timeout=30_000):
        money.wasted_table.clicked.emit(money.wasted.index(0, 0))
    qtbot.waitUntil(lambda: window.timeline.current == top["index"])
    assert Path(window.document.path).name == Path(top["file"]).name
    qtbot.waitUntil(lambda: window.cost_panel.task is None, timeout=30_000)  # the shown Cost panel counts it


def test_at_1366_the_legend_keeps_its_wrapped_height_and_nothing_is_drawn_over_it(qtbot, window, corpus_dev):
    """The legend wraps to more rows in a narrow tab: the sentence under it must start below its last row."""
    window.resize(1366, 768)
    panel = open_cost(qtbot, window, corpus_dev / "claude_code" / "session-9eda1058.jsonl")
    legend = panel.legend

    def laid_out() -> bool:  # once the layout has run: the legend its wrapped height, the sentences clear of it
        return (
            legend.width() > 0
            and legend.height() >= legend.heightForWidth(legend.width())
            and panel.explained.geometry().top() >= legend.geometry().bottom()
            and legend.geometry().top() >= panel.bar_sentence.geometry().bottom()
        )

    qtbot.waitUntil(laid_out)
    assert legend.heightForWidth(legend.width()) > legend.heightForWidth(2000)  # it did wrap here


def test_the_cost_panel_and_the_cache_lane_read_the_loads_one_count(qtbot, window, corpus_dev, monkeypatch):
    """The Cost panel and the timeline's cache lane each counted the trace again in a worker (9 s at 10,000
    messages, holding the interpreter while the user stepped): now both read the facts the load made from the
    trace's own count, the same figures counting again gives."""
    from foldscope.app.panels import cost as cost_module
    from foldscope.app.panels import timeline_state as timeline_module
    from foldscope.core.readout.cache_lane import lane_rows
    from foldscope.core.readout.cost_facts import cost_facts

    counted_again: list[str] = []

    def costs(*args, **kwargs):
        if kwargs.get("cache") is None:  # no cache report given: cost_facts counts the trace itself
            counted_again.append("cost")
        return cost_facts(*args, **kwargs)

    monkeypatch.setattr(cost_module, "cost_facts", costs)
    monkeypatch.setattr(timeline_module, "lane_rows", lambda *a, **k: counted_again.append("lane") or lane_rows(*a, **k))
    panel = open_cost(qtbot, window, corpus_dev / SESSION)
    doc = window.document
    assert counted_again == [] and panel.facts.cache is doc.cache_report() is not None
    again = cost_facts(doc.session, doc.policy)
    assert panel.facts.parts == again.parts and panel.facts.cache.rows == again.cache.rows
    assert window.timeline.lane.rows == lane_rows(doc.session, doc.policy) and window.timeline._lane_task is None


def test_the_librarys_spend_over_time_is_foldscope_usage_by_day_and_month_as_a_table_and_a_chart(
    qtbot, window, corpus_dev, tmp_path, capsys
):
    """Issue 45: the same figures as `foldscope usage DIR --plain` on the library's files, a row and a bar a period."""
    import json

    from foldscope.core.cli.main import main
    from foldscope.core.store.library import Library

    folder = tmp_path / "sessions"
    folder.mkdir()
    with Library(window.db) as library:
        for name in LIBRARY_FILES:
            link = folder / name.split("/")[-1]
            link.symlink_to(corpus_dev / name)
            library.import_session(load_session(link))
    window.show()
    window.side_tabs.setCurrentWidget(window.cost_panel)
    money = window.cost_panel.library
    window.cost_panel.tabs.setCurrentWidget(money)
    with qtbot.waitSignal(money.money_ready, timeout=60_000):
        money.button.click()
    for by in ("day", "month"):
        assert main(["usage", str(folder), "--plain", "--by", by, "--json"]) == 0
        cli = json.loads(capsys.readouterr().out)["rows"]
        money.by.setCurrentText(by)
        shown = [(money.usage.index(r, 0).data(), money.usage.index(r, 7).data()) for r in range(money.usage.rowCount())]
        assert shown == [(row[by], f"${row['cost_usd']:,.4f}") for row in cli]  # to the cent's hundredth, as the tab
        assert len(cli) > 1 or by == "month"
        bars = money.chart.bar_rects()
        assert len(bars) == len(cli)
        tallest = max(range(len(cli)), key=lambda k: cli[k]["cost_usd"])
        assert min(y for _, y, _, _ in bars) == bars[tallest][1]  # the costliest period's bar reaches highest


def test_an_implicit_cache_s_cost_panel_and_lane_show_reads_and_what_broke_them_never_a_write(qtbot, window, qtmodeltester, tmp_path):
    from tests.core.forensics.test_reads import TIMED
    from tests.core.formats.test_gemini_cli import _write

    panel = open_cost(qtbot, window, str(_write(tmp_path / "session-t.jsonl", TIMED)))
    assert [p.name for p in panel.facts.parts if p.tokens] == ["fresh", "cache_read", "output"], "no write part"
    model = panel.request_model
    qtmodeltester.check(model)
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in (3, 4)] == ["short of prefix", "what broke the read"]
    assert [model.index(r, 4).data() for r in range(model.rowCount())] == ["", "expired 10,000", "provider 9,000", "rewrite 12,000", ""]
    assert "read little back" in panel.gap_sentence.text() and "store" not in panel.gap_sentence.text()
    from tests.app.panels.test_cache_lane import shown_timeline

    lane = shown_timeline(qtbot, load_session(tmp_path / "session-t.jsonl")).lane  # painted: its legend drawn
    assert [(r.index, r.causes) for r in lane.rows if r.causes] == [
        (1, {"expired": 10_000}),
        (2, {"provider": 9_000}),
        (3, {"rewrite": 12_000}),
    ]
    words = [w for w, _, _ in lane.drawn.legend]
    assert words and not any(w.endswith(" write") for w in words) and any(w.startswith("read short") for w in words)


def test_at_1366_the_librarys_bill_shows_each_column_whole_but_the_last_whose_text_is_on_hover(qtbot, window, corpus_dev):
    """Issue 45: at 1366x768 the Library sub-tab's five equal columns read "provider mis..." and "text sent without..."."""
    from foldscope.core.store.library import Library

    with Library(window.db) as library:
        library.import_session(load_session(corpus_dev / SESSION))
    window.resize(1366, 768)
    window.show()
    window.side_tabs.setCurrentWidget(window.cost_panel)
    money = window.cost_panel.library
    window.cost_panel.tabs.setCurrentWidget(money)
    with qtbot.waitSignal(money.money_ready, timeout=60_000):
        money.button.click()
    table, model = money.parts_table, money.parts
    header = table.horizontalHeader()
    qtbot.waitUntil(lambda: table.isVisible() and header.length() >= table.viewport().width() > 0)  # laid out
    assert model.rowCount() >= 4 and table.viewport().width() < 700  # a narrow tab, several parts
    for column in range(model.columnCount() - 1):
        assert header.sectionSize(column) >= table.sizeHintForColumn(column), model.HEADERS[column]
    last = model.columnCount() - 1
    for row in range(model.rowCount()):
        cell = model.index(row, last)
        assert cell.data(Qt.ItemDataRole.ToolTipRole) == cell.data() != ""


def test_at_1366_the_requests_table_shows_8_rows_and_every_column_the_causes_whole_on_hover(qtbot, window, corpus_dev):
    """Issue 45: at 1366x768 the Requests sub-tab scrolled sideways (the last column out of sight) and showed 7 rows."""
    window.resize(1366, 768)
    panel = open_cost(qtbot, window, corpus_dev / "pi" / "pi-mono_large-session.jsonl")
    panel.tabs.setCurrentIndex(1)
    table, model = panel.requests, panel.request_model
    header = table.horizontalHeader()
    qtbot.waitUntil(lambda: table.isVisible() and table.viewport().width() > 0 and header.length() > 0)
    assert header.length() <= table.viewport().width() + 1  # no column past the right edge
    assert table.viewport().height() / table.verticalHeader().defaultSectionSize() >= 8
    for column in range(model.columnCount()):
        if column != model.CAUSES:
            assert header.sectionSize(column) >= table.sizeHintForColumn(column), model.HEADERS[column]
    long = max(range(model.rowCount()), key=lambda r: len(model.index(r, model.CAUSES).data()))
    cell = model.index(long, model.CAUSES)
    assert cell.data(Qt.ItemDataRole.ToolTipRole) == cell.data() != ""


def test_the_money_sentence_and_the_legend_give_each_part_one_figure(qtbot, window, corpus_dev):
    """New user 27: "Most went to provider misses $5.00" stood over the legend's "provider misses $4.9951": the
    sentence rounded a figure past $1 to cents where the legend, the tables and `foldscope cache` give four places."""
    import re

    panel = open_cost(qtbot, window, corpus_dev / SESSION)
    legend = {label: usd for label, usd in (re.match(r"(.+) (\$[\d,.]+) \(", text).groups() for _, text, _ in panel.legend.items)}
    said = re.findall(r"(?:Most went to |, )([a-z ]+) (\$[\d,.]+) \(\d+%\)", panel.bar_sentence.text())
    assert len(said) >= 2 and any(float(usd[1:].replace(",", "")) >= 1 for _, usd in said)  # a part past $1 among them
    assert [(label, legend[label]) for label, _ in said] == said
    total = re.search(r"The session cost (\$[\d,.]+) as billed", panel.bar_sentence.text()).group(1)
    assert total == f"${panel.facts.total_usd:,.4f}"


def test_a_requests_wasted_column_is_cache_json_waste_and_first_and_append_show_none(corpus_dev, capsys):
    import json

    from foldscope.app.models.cost import PartsModel
    from foldscope.core.cli import main as cli
    from foldscope.core.forensics.cache_report import cache_report

    path = corpus_dev / "claude_code/session-9eda1058.jsonl"  # provider misses beside appends
    assert cli.main(["cache", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    requests = RequestCostModel()
    requests.set_rows(cache_report(load_session(path)).rows)
    shown = [requests.index(i, 5).data() for i in range(requests.rowCount())]
    assert shown == [f"${sum(r['waste_usd'].values()):,.4f}" for r in out["requests"]]
    assert any(set(r["causes"]) & {"first", "append"} for r in out["requests"]) and any(s != "$0.0000" for s in shown)
    parts = PartsModel()
    parts.set_rows(list(out["totals"]["by_cause"].items()))
    wasted = {parts.index(i, 0).data(): parts.index(i, 3).data() for i in range(parts.rowCount())}
    assert [v for k, v in wasted.items() if "first" in k or "append" in k] == ["", ""], wasted


def test_the_heading_counts_the_requests_in_words_that_agree_one_request_many_requests(qtbot, window, corpus_dev):
    """short.jsonl bills one request (its reported usage: one requestId): 'Where the money went: 1 request'."""
    panel = open_cost(qtbot, window, str(corpus_dev / "claude_code" / "short.jsonl"))
    assert panel.heading.text() == "Where the money went: 1 request"
    # review11: its idle chart was drawn empty under "Each bar is the idle time before a request": it now says why
    assert panel.gap_sentence.text().startswith("The session made 1 request, so no request waited after another")


def test_an_undated_history_s_idle_chart_says_why_it_is_empty(qtbot, window, corpus_dev, tmp_path):
    """review9: an Aider history dates only each run's start, and the Cost tab drew an empty idle chart under
    "Each bar is the idle time before a request", saying nothing of why no bar was there."""
    from tests.core.formats.test_aider import HISTORY

    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY.replace("¶", "  ").split("# aider chat started at 2026-03-01 10:30:00")[0])
    panel = open_cost(qtbot, window, path)
    assert len(panel.facts.cache.rows) > 1 and all(r.causes.gap_s is None for r in panel.facts.cache.rows)
    assert panel.gap_sentence.text().startswith("The file records no time for its requests")
    window.side_tabs.setCurrentIndex(0)  # away, so the tab's facts are made again when it is shown
    panel = open_cost(qtbot, window, corpus_dev / SESSION)  # a dated session keeps the chart's own words
    assert panel.gap_sentence.text().startswith("Each bar is the idle time before a request")


def test_the_legend_and_the_librarys_money_write_a_sum_under_a_hundredth_of_a_cent_as_cache_does():
    """review11: the Cost tab's legend gave a Copilot CLI session's parts as "fresh input $0.0000 (95 tokens)", where
    `foldscope cache` writes <$0.0001."""
    from foldscope.app.panels.cost import _money
    from foldscope.app.panels.library_money import _usd
    from foldscope.core.readout.cost_facts import Part

    assert _money(Part("fresh", 95, 0.000019), True) == "<$0.0001 (95 tokens)"
    assert _money(Part("output", 1500, 0.0123), True) == "$0.0123 (1,500 tokens)"
    assert _usd(0.00002) == "<$0.0001" and _usd(None) == "n/a"


def test_a_session_of_approximate_usage_has_its_bill_marked_on_the_cost_tab_as_on_every_screen(qtbot, window, corpus_dev, tmp_path):
    """review11: the README says approximate usage (Aider's rounding, Copilot CLI's totals shared out) is marked ~ on
    every screen; the Cost tab gave the bill and each part unmarked ("fresh input $0.0000 (95 tokens)")."""
    from tests.core.formats.test_aider import HISTORY

    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY.replace("¶", "  ").split("# aider chat started at 2026-03-01 10:30:00")[0])
    panel = open_cost(qtbot, window, path)
    assert panel.bar_sentence.text().startswith("The session cost ~")
    assert "(~: the file's usage is approximate" in panel.bar_sentence.text()
    assert panel.legend.items and all(" ~" in words and "(~" in words for _, words, _ in panel.legend.items)
    window.side_tabs.setCurrentIndex(0)  # away, so the tab's facts are made again when it is shown
    panel = open_cost(qtbot, window, corpus_dev / SESSION)  # exact usage: no mark
    assert "~" not in panel.bar_sentence.text() and not any("~" in words for _, words, _ in panel.legend.items)
