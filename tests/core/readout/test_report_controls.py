"""The report carries a session's control characters as visible escapes, never raw: session text is data."""

from __future__ import annotations

import re

from foldscope.core.cli.main import main
from tests.core.live_sessions import append, assistant, result, user

# ESC (a terminal colour and an OSC title), BEL, a carriage return, a NUL and DEL: each in a text the page shows
CONTROLLED = "\x1b[31mred\x1b[0m \x1b]0;title\x07 done\rover \x00nul \x7fdel"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f]")  # C0 but tab and newline, and DEL


def test_the_reports_session_text_shows_esc_and_bel_as_escapes_and_keeps_tab_and_newline(tmp_path):
    path = tmp_path / "controls.jsonl"
    append(
        path,
        [
            user(0, "look\tat\nthis " + CONTROLLED),
            assistant(1, CONTROLLED, tool=("t1", "Bash", {"command": "printf '" + CONTROLLED + "'"})),
            result(1, "t1", CONTROLLED * 3),
            assistant(2, "ok"),
        ],
    )
    out = tmp_path / "report.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert RAW.findall(page) == []
    assert "\\x1b[31mred\\x1b[0m \\x1b]0;title\\x07 done\\x0dover \\x00nul \\x7fdel" in page
    assert "look\tat\nthis " in page  # tab and newline are text, not controls to hide


def test_every_ascii_control_but_tab_and_newline_is_escaped_in_an_ascii_text_and_nothing_else_is():
    from foldscope.core.readout.report_html import esc

    for code in range(0x80):
        shown = esc(f"a{chr(code)}b")
        if code in (0x09, 0x0A) or 0x20 <= code < 0x7F:
            assert RAW.findall(shown) == [] and "\\x" not in shown, code
        else:
            assert shown == f"a\\x{code:02x}b", code
