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


def test_esc_writes_every_markup_character_as_html_escape_does_and_every_control_as_its_escape_in_any_text():
    import html
    import random

    from foldscope.core.readout.report_html import _CONTROLS, _visible, esc

    # Each markup character, quote, control, a bidirectional override, a lone surrogate and text outside ASCII, alone
    # and mixed: every text is read by one byte translation of its UTF-8 (which entities to write, whether a control is
    # there), and must give html.escape's text with each control shown as its escape.
    alphabet = [chr(c) for c in range(0xA0)] + ["é", "中", "\u202e", "\u2066", "😀", "\ud800", "\udfff"]
    rnd = random.Random(48)
    texts = ["", "plain", "a&b", "<script>alert('x')</script>", 'say "hi"', "&amp;", "tab\tnew\nline", CONTROLLED]
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 16))) for _ in range(20000)]
    for text in texts:
        assert esc(text) == _CONTROLS.sub(_visible, html.escape(text, quote=True)), repr(text)
    assert esc("<&>\"'") == "&lt;&amp;&gt;&quot;&#x27;" and esc("a\x1b&") == "a\\x1b&amp;"


def test_a_messages_time_of_day_is_datetimes_rounded_to_the_microsecond_half_to_even():
    from datetime import UTC, datetime

    from foldscope.core.readout.report_transcript import _when

    def datetimes(at: float) -> str:
        t = datetime.fromtimestamp(at, UTC)
        return f" <span class=at>{t.hour:02d}:{t.minute:02d}:{t.second:02d}</span>"

    # 0.5 us before a second is that second (1,000,000 even), a hair less is not; the day's last second; an int
    edges = [0.0, 59.9999995, 59.99999949999, 86399.9999996, 1767000026.701, 1764979199.9999995, 1764979199.9999994, 1767000026]
    for at in edges + [k * 7919.123457 + 0.9999995 for k in range(20000)]:
        assert _when(at) == datetimes(at), at
    assert _when(59.9999995) == " <span class=at>00:01:00</span>" and _when(None) == ""
    assert _when(-1.5) == datetimes(-1.5)  # before 1970: datetime's own reading
