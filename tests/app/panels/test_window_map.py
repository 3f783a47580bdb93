"""Cache marks on the window map and request panel as core places them, and the unseen head said where it counts."""

from __future__ import annotations

import pytest

from foldscope.app.panels.window_map import mark_text
from foldscope.app.panels.window_map_blocks import LEFT, VIEW_Y
from foldscope.app.panels.window_map_state import SEPARATOR
from foldscope.app.qt import QPointF
from foldscope.app.settings import WindowSettings
from foldscope.app.window import MainWindow
from foldscope.core.model.policy import Policy
from foldscope.core.readout.marks_facts import cache_marks, first_round_for
from foldscope.core.request.compile import make_plan
from foldscope.core.request.trace import session_tools
from foldscope.core.request.trace_measure import measure_trace
from tests.paths import CORPUS_DEV

CACHING = Policy(max_input_tokens=100_000, prompt_caching=True, source="test profile")
CLAUDE_CODE = "/work/shared/corpus/dev/claude_code/tool_heavy.jsonl"


def opened(qtbot, tmp_path, path, policy=None) -> MainWindow:
    window = MainWindow(settings=WindowSettings(tmp_path / "s.ini"), db=str(tmp_path / "lib.db"), policy=policy)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.document_loaded, timeout=30_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None)
    return window


@pytest.fixture
def caching_window(qtbot, tmp_path):
    from foldscope.core.formats.demo import demo_path

    return opened(qtbot, tmp_path, demo_path(), CACHING)


def core_marks(doc, view):
    """What core's compiler plans for a view under the document's policy (the answer the map must draw)."""
    record = doc.session.record
    messages = [record.get(mid) for mid in view]
    return make_plan(
        messages, record=record, policy=doc.policy, tools=session_tools(doc.session), first_round=first_round_for(doc, messages, doc.policy)
    ).marks


def test_stepping_the_timeline_draws_the_marks_core_places_for_that_request(caching_window):
    window = caching_window
    doc = window.document
    assert doc.policy.caching
    for k in (0, 3, len(doc.requests) - 1, len(doc.requests)):
        window.timeline.step_to(k)
        expected = core_marks(doc, doc.view)
        drawn = window.window_map.marks
        assert expected and len(drawn) == len(expected)
        for mark, position in zip(drawn, expected):
            assert (mark.lifetime, mark.anchor) == (position.lifetime, position.anchor)
            assert mark.index == (position.index if position.where == "messages" else None)
        assert [m.lifetime for m in drawn].count("1h") <= 1 and drawn[-1].anchor == "tail"
        assert drawn[-1].index == doc.index_of(doc.view[-1])  # the moving tail closes the view


def test_hovering_a_mark_names_its_lifetime(qtbot, caching_window):
    window_map = caching_window.window_map
    tail = window_map.marks[-1]
    x = window_map.mark_x(tail)
    assert window_map.mark_at(QPointF(x, VIEW_Y - 5)) == tail
    assert window_map.mark_at(QPointF(x, VIEW_Y + 40)) is None
    assert mark_text(tail).startswith("5m (lives five minutes), tail")
    assert not window_map.grab().isNull()


def test_the_request_panel_lists_and_highlights_the_marks_in_the_payload(caching_window):
    window = caching_window
    window.side_tabs.setCurrentWidget(window.request_panel)
    window.timeline.step_to(4)
    panel = window.request_panel
    assert len(panel.marks) == len(window.window_map.marks)
    header = panel.header.text()
    assert f"Cache marks</b> ({len(panel.marks)}" in header and "the moving tail" in header
    text = panel.payload.toPlainText()
    assert text.count('"cache_control"') == len(panel.marks)
    lines = text.splitlines()
    assert panel.mark_lines and all(lines[n - 1].strip().startswith(('"cache_control"', '"ttl"', '"type"', "}")) for n in panel.mark_lines)


def test_caching_left_unset_on_a_session_without_cache_reads_draws_no_marks_and_says_as_recorded(qtbot, window, document):
    window.show()
    qtbot.waitExposed(window)
    window.set_document(document)
    assert document.policy is not None and document.policy.prompt_caching is None
    assert window.window_map.marks == ()
    said = "caching as recorded: no marks, the file's usage shows no cache reads"
    assert said in window.window_map.marks_note
    window.side_tabs.setCurrentWidget(window.request_panel)
    assert said in window.request_panel.header.text()


def test_caching_left_unset_on_a_cached_claude_code_session_says_as_recorded_on_every_screen(qtbot, tmp_path):
    """The reviewer's finding: the map said 'prompt caching is off' on a session its file bills with cache reads, while
    the replay lab modelled marks. Unset is caching as recorded: the map, the request panel, the status bar and the
    lab's cache line say the same words, none says off, and the lab models marks, as the file's usage shows reads."""
    from foldscope.app.panels.status import status_tooltip
    from foldscope.core.replay.lab import cache_rules
    from foldscope.core.request.measure import Measure

    window = opened(qtbot, tmp_path, CLAUDE_CODE)
    doc = window.document
    assert doc.policy is not None and doc.policy.prompt_caching is None
    assert any(r.usage and r.usage.cache_read for r in doc.session.trace)  # the file bills cache reads
    rules, lab_says = cache_rules(Measure(doc.session, doc.policy))
    said = "caching as recorded: marks where the file's usage shows cache reads, modelled where ADR-0127 puts them"
    assert rules.mode == "marks" and lab_says == said
    assert window.window_map.marks == ()
    assert window.window_map.marks_note == " (caching as recorded: the agent's own, which the file does not hold)"
    line = window.window_map.summary()[:2]  # the request's size, then the marks: at 1366 both fit the map's line
    assert line[1] == f"no cache marks{window.window_map.marks_note}"
    window.resize(1366, 768)
    qtbot.waitUntil(lambda: window.window_map.width() < 1366)
    room = window.window_map.width() - 10 - 200  # the line's room after the title (window_map_paint's `start`)
    assert window.window_map.fontMetrics().horizontalAdvance("   ·   ".join(line)) <= room
    window.side_tabs.setCurrentWidget(window.request_panel)
    header = window.request_panel.header.text()
    assert said in header
    assert f"Policy in force: {doc.policy.source}; {said}" in status_tooltip(doc)
    for shown in (window.window_map.marks_note, header, status_tooltip(doc)):
        assert "caching is off" not in shown and "caching off" not in shown


def test_turning_caching_on_in_the_policy_editor_places_marks(qtbot, window, document):
    window.set_document(document)
    window.session_actions.policy_editor.set_text("prompt_caching", "true")
    assert document.policy.caching
    marks, note = cache_marks(document, document.view)
    assert marks and note == "" and window.window_map.marks == marks


def test_a_claude_code_session_says_its_estimate_includes_the_unseen_head(qtbot, tmp_path):
    window = opened(qtbot, tmp_path, CLAUDE_CODE)
    doc = window.document
    head = measure_trace(doc.session, doc.policy, prefix=False).unseen_head
    assert head > 0 and doc.unseen_head == head
    assert f"includes an unseen head of {head:,} tokens" in window.status_label.full_text()
    assert "system prompt and tools" in window.status_label.toolTip()
    window.side_tabs.setCurrentWidget(window.request_panel)
    window.timeline.step_to(1)
    assert f"unseen head of {head:,} tokens" in window.request_panel.header.text()
    header = window.request_panel.header.text()
    assert f"Estimate {doc.requests[1].estimate:,} tokens" in header
    r = doc.requests[1]  # the size shown is predicted input, beside the reported input and the difference
    assert f"Predicted input <b>{r.predicted:,} tokens</b>, anchored on request 0" in header
    assert f"reported {r.reported_input:,} · difference {r.difference()}" in header


def test_the_unseen_head_leads_the_view_bar_as_its_own_block_named_in_the_legend(qtbot, tmp_path):
    """New user 15: the unseen head was a large grey block the legend did not name."""
    window = opened(qtbot, tmp_path, CLAUDE_CODE)
    the_map, doc = window.window_map, window.document
    parts, scale = doc.shown_composition()
    lead = dict(the_map.lead_parts())
    assert lead["unseen_head"] == pytest.approx(parts.unseen_head) and parts.unseen_head > 0
    assert sum(lead.values()) == pytest.approx(the_map.view_widths()[0])
    assert sum(lead.values()) + sum(the_map.view_widths()[1].values()) == pytest.approx(parts.total * scale)
    assert ("unseen_head", "unseen head") in the_map.legend_entries()
    rects = dict(the_map.lead_rects())
    assert rects["unseen_head"].left() == LEFT  # first on the bar, before every message


def test_a_pi_session_with_no_unseen_head_draws_no_unseen_head_block(qtbot, tmp_path, corpus_dev):
    """New user 15: pi sessions (unseen head 0) showed the same grey block; it was the framing, unnamed."""
    window = opened(qtbot, tmp_path, corpus_dev / "pi" / "pi-mono_large-session.jsonl")
    the_map = window.window_map
    names = [name for name, _ in the_map.lead_parts()]
    assert window.document.unseen_head == 0 and "unseen_head" not in names
    assert "unseen head" not in [label for _, label in the_map.legend_entries()]
    assert "framing" in names and ("framing", "framing") in the_map.legend_entries()


def test_a_lionagi_session_has_no_unseen_head(window, document):
    window.set_document(document)
    assert document.unseen_head == 0 and "unseen head" not in window.status_label.full_text()


def test_a_refused_profile_at_start_says_why_and_opens_nothing(tmp_path, capsys):
    from foldscope.app.gui import run_gui

    profile = tmp_path / "bad.yaml"
    profile.write_text("prompt_caching: sometimes\n")
    assert run_gui(["--profile", str(profile), "--screenshot", str(tmp_path / "out.png")]) == 2
    assert "prompt_caching" in capsys.readouterr().err and not (tmp_path / "out.png").exists()


def test_the_status_bar_shows_the_next_requests_predicted_input_and_the_free_space_in_the_stated_window(qtbot, tmp_path):
    path = "/work/shared/corpus/dev/codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    window = opened(qtbot, tmp_path, path)
    doc = window.document
    report = measure_trace(doc.session, doc.policy, prefix=False)
    assert doc.now_predicted == report.next_predicted.predicted > 0
    assert doc.context_window == doc.session.extras["context_window"] == 258_400  # Codex's model_context_window
    text = window.status_label.full_text()
    assert f"predicted {doc.now_predicted:,} tokens" in text
    assert f"free {258_400 - doc.now_predicted:,} of the 258,400-token context window" in text
    last = doc.requests[-1]
    assert abs(last.predicted / last.reported_input - 1) < 0.01  # the size shown is within 1% of the bill


@pytest.mark.parametrize("width", [1380, 1090, 900])
def test_the_legend_row_with_the_unseen_head_stays_inside_the_map(qtbot, tmp_path, width):
    """The unseen head and framing lengthen the legend: at 1366 with the policy dock open it ran past the edge."""
    from foldscope.app.panels.window_map_blocks import TAKEN_LABEL

    window = opened(qtbot, tmp_path, CLAUDE_CODE)
    the_map = window.window_map
    the_map.resize(width, the_map.height())
    metrics = the_map.fontMetrics()
    places = the_map.legend_places(metrics)
    assert [key for key, _, _ in places][-2:] == ["mark", "taken"] and "unseen_head" in [k for k, _, _ in places]
    assert the_map._legend_end(places, metrics) <= width - 4
    assert all(a[2] < b[2] for a, b in zip(places, places[1:]))
    label = places[-1][1]
    assert TAKEN_LABEL.startswith(label) and (label == TAKEN_LABEL or TAKEN_LABEL[len(label)] == " ")


SANITISED = sorted(p.name for p in (CORPUS_DEV / "codex").glob("*019c8*"))


@pytest.mark.parametrize("name", SANITISED or ["absent"])
def test_the_window_map_never_draws_a_view_longer_than_the_record_it_comes_from(qtbot, tmp_path, corpus_dev, name):
    """Issue 41.7: a sanitised Codex file's view was drawn at count x scale (3.9) over a record drawn at its count."""
    path = corpus_dev / "codex" / name
    if not path.exists():
        pytest.skip("no sanitised Codex file in the dev corpus")
    window = opened(qtbot, tmp_path, path)
    the_map, doc = window.window_map, window.document
    for k in sorted({0, len(doc.requests) // 2, len(doc.requests) - 1}):
        window.timeline.step_to(k)
        view, record = the_map.bars()
        # A system message's block carries the tools too (they are no message's): the rest are drawn as recorded.
        drawn = {i: w for i, w in zip(view.indexes, view.widths) if doc.message(i).kind != "system"}
        for index, width in drawn.items():
            assert width <= record.widths[index] + 1e-6, (k, index, width, record.widths[index])
        assert sum(drawn.values()) <= sum(record.widths) + 1e-6


@pytest.mark.parametrize("name", SANITISED[:1] or ["absent"])
def test_a_file_that_accounts_for_under_half_of_what_was_sent_says_so_in_the_warnings_bar(qtbot, tmp_path, corpus_dev, name):
    path = corpus_dev / "codex" / name
    if not path.exists():
        pytest.skip("no sanitised Codex file in the dev corpus")
    window = opened(qtbot, tmp_path, path)
    partial = window.document.measure.partial_warning()
    assert partial is not None and "accounts for" in partial and "\n" not in partial
    assert partial in window.warnings_bar.warnings and window.warnings_bar.warnings.count(partial) == 1


def test_the_unseen_head_block_names_its_parts_from_a_head_file_adding_up_to_it(qtbot, tmp_path, monkeypatch):
    from pathlib import Path

    from foldscope.app.panels import window_map
    from foldscope.app.qt import QEvent, QMouseEvent, QPointF, Qt
    from foldscope.core.readout import head_split

    monkeypatch.setattr(head_split, "_PASTES", {})
    head_split.use_head_file(str(CLAUDE_CODE), Path(__file__).parents[2] / "core" / "readout" / "fixtures" / "context_paste.txt")
    window = opened(qtbot, tmp_path, CLAUDE_CODE)
    the_map = window.window_map
    shown: list[str] = []
    monkeypatch.setattr(window_map.QToolTip, "showText", lambda _at, text, *_: shown.append(text))
    at = dict(the_map.lead_rects())["unseen_head"].center()
    the_map.mouseMoveEvent(
        QMouseEvent(
            QEvent.Type.MouseMove,
            QPointF(at),
            QPointF(at),
            Qt.MouseButton.NoButton,
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
        )
    )
    head = round(dict(the_map.lead_parts())["unseen_head"])
    lines = shown[-1].removeprefix("<p style='white-space:pre'>").removesuffix("</p>").splitlines()
    assert lines[0].startswith("unseen head") and f"{head:,} tokens" in lines[0]
    parts = dict(line.strip().rsplit(": ", 1) for line in lines[1:])
    assert "system tools" in parts and "unseen head, not split" in parts
    assert sum(int(v.replace(",", "")) for v in parts.values()) == head


def test_the_maps_line_keeps_saying_why_no_marks_are_drawn_where_the_whole_why_does_not_fit(qtbot, tmp_path):
    """Caching as recorded's why, in the map's short words, fits beside the size at 1366; where it does not (a narrower
    map: the policy dock open) the map's line says the state alone rather than nothing at all (the request panel and
    the tooltip say why)."""
    window = opened(qtbot, tmp_path, CLAUDE_CODE)
    window.resize(1366, 768)
    qtbot.waitUntil(lambda: window.window_map.width() < 1366)
    the_map = window.window_map
    advance = the_map.fontMetrics().horizontalAdvance
    room = the_map.width() - 210  # the painter's: after the title, less its margin
    whole = the_map.summary()
    assert the_map.fitted_summary(advance, room)[:2] == whole[:2]  # at 1366 the map's why fits beside the size
    room = advance(SEPARATOR.join([whole[0], "no cache marks (caching as recorded)"])) + 1  # narrower: the dock open
    parts = the_map.fitted_summary(advance, room)
    assert parts[0] == whole[0] and parts[1:2] == ["no cache marks (caching as recorded)"]
    assert advance("   ·   ".join(parts)) <= room
    whole = the_map.summary()
    assert the_map.fitted_summary(advance, advance("   ·   ".join(whole))) == whole  # with room, every part and the why
