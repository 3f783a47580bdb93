"""The composition panel: the shown request's parts add up to its count and are the ones `foldscope composition` prints."""

from __future__ import annotations

import json

from foldscope.app.models.composition import ItemRole
from foldscope.app.qt import Qt
from foldscope.core.cli.main import main


def _open(qtbot, window, path):
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.document_loaded, timeout=30_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None)
    window.side_tabs.setCurrentWidget(window.composition_panel)
    return window.composition_panel


def _rows(table) -> list:
    model = table.model()
    return [model.index(row, 0).data(ItemRole) for row in range(model.rowCount())]


def test_the_parts_of_the_shown_request_add_up_to_its_count_and_equal_foldscope_composition(qtbot, window, corpus_dev, capsys):
    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    panel = _open(qtbot, window, path)
    window.timeline.step_to(12)
    qtbot.waitUntil(lambda: panel.composition is not None and panel.composition.request == 12)
    doc = window.document
    parts = _rows(panel.category_table)
    r = doc.requests[12]  # its count of what the file holds, and the unseen head beside it
    assert sum(p.tokens for p in parts) == panel.composition.size == r.own_count + r.unseen_head
    assert main(["composition", str(path), "--at-request", "12", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert sorted((p["name"], p["tokens"]) for p in printed["parts"]) == sorted((p.name, p.tokens) for p in parts)
    assert printed["estimate"] == doc.requests[12].estimate == panel.composition.estimate


def test_the_lists_sort_by_tokens_first_and_by_any_column(qtbot, window, corpus_dev):
    panel = _open(qtbot, window, corpus_dev / "claude_code" / "session-196820da.jsonl")
    qtbot.waitUntil(lambda: panel.composition is not None)
    panel.tabs.setCurrentWidget(panel.group_table)
    tokens = [g.tokens for g in _rows(panel.group_table)]
    assert tokens == sorted(tokens, reverse=True) and len(tokens) > 5
    panel.group_table.sortByColumn(2, Qt.SortOrder.AscendingOrder)
    times = [g.times for g in _rows(panel.group_table)]
    assert times == sorted(times)


def test_the_largest_filter_keeps_the_largest_whatever_the_sort(qtbot, window, corpus_dev):
    panel = _open(qtbot, window, corpus_dev / "claude_code" / "session-196820da.jsonl")
    qtbot.waitUntil(lambda: panel.composition is not None)
    panel.largest.setCurrentIndex(0)  # largest 10
    kept = _rows(panel.group_table)
    assert len(kept) == 10
    assert sorted(g.tokens for g in kept) == sorted(g.tokens for g in panel.composition.top(10))
    panel.largest.setCurrentIndex(panel.largest.count() - 1)  # all
    assert len(_rows(panel.group_table)) == len(panel.composition.groups)


def test_choosing_a_group_selects_its_newest_message(qtbot, window, corpus_dev):
    panel = _open(qtbot, window, corpus_dev / "claude_code" / "session-196820da.jsonl")
    qtbot.waitUntil(lambda: panel.composition is not None)
    table = panel.group_table
    row = next(r for r in range(table.model().rowCount()) if table.model().index(r, 0).data(ItemRole).indexes)
    index = table.model().index(row, 0)
    table.clicked.emit(index)
    assert window.inspector.index == index.data(ItemRole).indexes[-1]
    assert window.side_tabs.currentWidget() is panel  # the panel stays in front


def test_the_panel_follows_an_action_on_the_active_view(qtbot, demo_window):
    window = demo_window
    panel = window.composition_panel
    window.side_tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: panel.composition is not None)
    before = panel.composition.size
    largest = max(window.document.view_position, key=lambda i: window.document.tokens[i])
    window.select_message(largest, reveal=False)
    window.session_actions.evict()
    qtbot.waitUntil(lambda: panel.composition is not None and panel.composition.size < before)
    assert sum(p.tokens for p in panel.composition.parts) == panel.composition.size


def test_the_composition_models_are_sound_qt_models(qtbot, qtmodeltester, window, corpus_dev):
    panel = _open(qtbot, window, corpus_dev / "claude_code" / "session-196820da.jsonl")
    qtbot.waitUntil(lambda: panel.composition is not None)
    # FactsModel behind each table, and the LargestFilter over it
    for model in (panel.categories, panel.groups, panel.repeats, panel.category_proxy, panel.group_proxy, panel.repeat_proxy):
        qtmodeltester.check(model)
        assert model.rowCount() > 0
    first = panel.categories.index(0, 1)
    assert first.data() == f"{panel.composition.parts[0].tokens:,}"


def test_a_head_file_splits_the_unseen_head_in_the_tab_as_foldscope_composition_does(qtbot, window, corpus_dev, capsys, monkeypatch):
    from pathlib import Path

    from foldscope.core.readout import head_split

    monkeypatch.setattr(head_split, "_PASTES", {})
    paste = Path(__file__).parents[2] / "core" / "readout" / "fixtures" / "context_paste.txt"
    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    head_split.use_head_file(str(path), paste)  # what `foldscope --head FILE SESSION` does before the window opens
    panel = _open(qtbot, window, path)
    window.timeline.step_to(12)
    qtbot.waitUntil(lambda: panel.composition is not None and panel.composition.request == 12)
    parts = _rows(panel.category_table)
    head = [p for p in parts if p.name.startswith("unseen head")]
    assert {p.name for p in head} >= {"unseen head: system tools", "unseen head: memory files", "unseen head, not split"}
    assert sum(p.tokens for p in head) == window.document.requests[12].unseen_head
    assert main(["composition", str(path), "--at-request", "12", "--head", str(paste), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert sorted((p["name"], p["tokens"]) for p in printed["parts"]) == sorted((p.name, p.tokens) for p in parts)


def test_the_heading_names_each_of_the_requests_three_sizes_as_the_cli_composition_and_report_do(
    qtbot, window, corpus_dev, capsys, tmp_path
):
    import re

    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    panel = _open(qtbot, window, path)
    window.timeline.step_to(46)  # the largest: the one the report composes
    qtbot.waitUntil(lambda: panel.composition is not None and panel.composition.request == 46)
    heading = panel.heading.text()
    assert main(["composition", str(path), "--at-request", "46", "--json"]) == 0
    c = json.loads(capsys.readouterr().out)
    assert c["predicted"] and len({c["size"], c["estimate"], c["predicted"]}) == 3  # three figures for one request
    # each size by its name: the count the parts add up to (the unseen head apart), the estimate, the predicted input
    sizes = (
        f"count {c['size']:,} tokens ({c['counted']:,} counted + an unseen head of {c['unseen_head']:,}), "
        f"estimate {c['estimate']:,} (× scale {c['scale']:.3f}), predicted input {c['predicted']:,}"
    )
    assert sizes in heading
    assert not re.search(r"<b>[\d,]+ tokens</b>", heading)  # no bare bold size beside the request panel's headline
    assert main(["composition", str(path), "--at-request", "46"]) == 0
    assert sizes in capsys.readouterr().out.splitlines()[0]
    out = tmp_path / "r.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    capsys.readouterr()
    assert "<b>request 46</b>: " + sizes.replace("&", "&amp;") in out.read_text(encoding="utf-8")


def test_the_bar_paints_the_framing_apart_from_the_system_prompt_and_as_the_window_map_does(qtbot):
    """review11: the framing (the JSON around and between blocks) fell to the system prompt's purple in the
    Composition bar, where the window map's legend draws it grey: a Qwen Code request with no system prompt showed a
    tenth of its bar as one, in the system's colour."""
    from foldscope.app.panels.composition import category_colour
    from foldscope.app.panels.window_map_blocks import LEAD_COLOURS
    from foldscope.core.readout.composition import ASSISTANT, CALLS, COPIES, FRAMING, HEAD, INSTRUCTIONS, NOTES, UNSEEN

    framing = category_colour(FRAMING)
    assert framing == LEAD_COLOURS["framing"]
    assert all(framing != category_colour(other) for other in (HEAD, UNSEEN, INSTRUCTIONS, ASSISTANT, CALLS, NOTES, COPIES))
