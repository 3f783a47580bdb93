"""The status bar's line: the estimate against the ceiling first, over-ceiling said, whole parts only, all in the tooltip."""

from __future__ import annotations

import pytest

from foldscope.app.panels.status import SEPARATOR, StatusLine, status_parts
from foldscope.core.formats import load_session
from foldscope.core.readout.opening import build_document

PI = "pi/pi-mono_large-session.jsonl"


@pytest.fixture(scope="module")
def pi_document():
    from tests.paths import CORPUS_DEV

    path = CORPUS_DEV / PI
    if not path.is_file():
        pytest.skip("the dev corpus is not here")
    return build_document(load_session(path), str(path))


def test_the_line_opens_on_the_estimate_and_says_by_how_much_it_is_over_the_ceiling(pi_document):
    doc = pi_document
    parts = status_parts(doc)
    ceiling = doc.rules.ceiling
    assert doc.now_size > ceiling  # the new user's case: 109 % of the ceiling
    assert parts[0] == (
        f"next request: estimate {doc.now_size:,} of the {ceiling:,}-token ceiling "
        f"({doc.now_size / ceiling:.0%}, over by {doc.now_size - ceiling:,})"
    )


@pytest.mark.parametrize("size", [(1600, 1000), (1366, 768)])
def test_at_1600_and_1366_the_bar_shows_the_estimate_and_over_whole_and_never_a_part_cut(qtbot, window, pi_document, size):
    """New user 14: at both widths the line was cut mid-word, hiding the over-ceiling part."""
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    window.set_document(pi_document)
    line = window.status_label
    qtbot.waitUntil(lambda: line.width() > 0.7 * size[0])
    shown = line.text()
    assert shown.startswith(status_parts(pi_document)[0]) and "over by" in shown
    assert 1 <= line.shown_parts() and shown == SEPARATOR.join(line.parts[: line.shown_parts()])
    assert line.fontMetrics().horizontalAdvance(shown) <= line.contentsRect().width()
    tip = line.toolTip()
    assert all(part in tip for part in status_parts(pi_document))  # what the bar leaves out, the tooltip says


def test_a_narrow_line_drops_whole_parts_from_the_end_and_cuts_a_lone_part_between_words(qtbot):
    line = StatusLine()
    qtbot.addWidget(line)
    line.show()
    line.set_parts(["estimate 1,000 of the 2,000-token ceiling (50%)", "next request: predicted 990 tokens"])
    metrics = line.fontMetrics()
    line.resize(metrics.horizontalAdvance(line.parts[0]) + 20, 20)
    assert line.text() == line.parts[0] and line.shown_parts() == 1
    line.resize(metrics.horizontalAdvance("estimate 1,000 of the") + 30, 20)
    assert line.text().endswith(" …") and line.parts[0].startswith(line.text()[:-2])
    assert line.text()[:-2].split(" ")[-1] in line.parts[0].split(" ")  # cut between words, not inside one
    line.resize(2000, 20)
    assert line.text() == line.full_text()


def test_the_line_names_the_agent_as_a_person_names_it_not_the_reader_s_name():
    """review9: a Copilot CLI session's bar said "Format: copilot_cli", a machine name, where `sessions` and the agent
    sessions dialog say "GitHub Copilot CLI"; before and after counting, the line names the agent from the registry."""
    from tests.paths import CORPUS

    path = CORPUS / "staged" / "copilot-cli" / "agent-sessions-small.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    session = load_session(path)
    assert session.format == "copilot_cli"
    doc = build_document(session, str(path))
    assert doc.is_counted and "Format: GitHub Copilot CLI" in status_parts(doc)
    doc.is_counted = False  # the first step of a load: the line before any size is known
    assert "Format: GitHub Copilot CLI" in status_parts(doc) and not any("copilot_cli" in p for p in status_parts(doc))
