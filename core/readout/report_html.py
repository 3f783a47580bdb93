"""The report's HTML pieces: escaped text and figures, tables, sections, and the colours of its parts and rules."""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Any

from foldscope.core.model.money_text import usd_text

RULE_COLOURS = {"ceiling": "#c0392b", "line": "#d68910", "target": "#1e8449"}
CATEGORY_COLOURS = {
    "system and tools": "#6b5bbd",
    "unseen head": "#9a9a9a",
    "instructions": "#1f7a4d",
    "assistant text": "#1c5fb8",
    "tool calls": "#d35400",
    "notes": "#0f8a8a",
    "clipped copies": "#c0392b",
    "framing": "#c8c8c8",
}
# The bill's parts, as the GUI's Cost tab colours them (app/panels/cost.py).
COST_COLOURS = {
    "fresh": "#7f8c8d",
    "cache_read": "#5dade2",
    "first": "#1e8449",
    "append": "#27ae60",
    "rewrite": "#c0392b",
    "expired": "#d68910",
    "provider": "#8e44ad",
    "unexplained": "#34495e",
    "output": "#1c5fb8",
    "subagents": "#b08d57",
    "summariser": "#0f8a8a",
}
UNSEEN_SHADES = ("#8a8a8a", "#a6a6a6", "#7a7a7a", "#b4b4b4", "#959595", "#6e6e6e")
RESULT_SHADES = ("#b08d57", "#c9a56b", "#8f7040", "#d8bd8a", "#a07a45", "#e0cba0")


class Markup(str):
    """HTML the report built (a swatch, a link): a table cell that holds it is not escaped again."""


# C0 controls but tab and newline, DEL and C1 controls, and the bidirectional overrides: session text is data, so
# an ESC or BEL in it is shown as its escape (\x1b), as the terminal output (core.cli.terminal_text) shows it.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# Printable ASCII, tab and newline, but for the five characters html.escape writes as entities: what a text holds
# beyond these (one byte translation of its UTF-8, no copy of the text where none) says which of the five to replace and
# whether a control may be there to show (esc).
_PLAIN_ASCII = bytes(c for c in range(0x20, 0x7F) if chr(c) not in "&<>\"'") + b"\t\n"
# html.escape's entities, in its order (the ampersand first), each with its character's byte
_ENTITIES = tuple((ord(c), c, entity) for c, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#x27;")))
_MARKUP = b"&<>\"'"


def esc(value: Any) -> str:
    """Session text (or any value) as HTML text: every markup character escaped, quotes included, and every
    control character but tab and newline written as its escape (ESC as \\x1b), never raw into the page."""
    text = str(value)
    # The characters beyond the plain ones, in order, as UTF-8: every byte of a character beyond ASCII is beyond it
    # too, so none is cut, and a text beyond ASCII is looked at in bytes as an ASCII one is (html.escape's five passes
    # and the controls' pattern over the whole text were a fifth of the conversation's instructions: 4,696 of its
    # 48,842 texts).
    rest = text.encode("utf-8", "surrogatepass").translate(None, _PLAIN_ASCII)
    if not rest:
        return text
    for byte, char, entity in _ENTITIES:
        if byte in rest:
            text = text.replace(char, entity)
    others = rest.strip(_MARKUP)  # empty where only markup was there; else what holds every control there is
    return _CONTROLS.sub(_visible, text) if others and _CONTROLS.search(others.decode("utf-8", "surrogatepass")) else text


def num(value: int | float | None) -> str:
    return "—" if value is None else f"{value:,}"


def usd(value: float | None) -> str:
    return "—" if value is None else usd_text(value)


@dataclass
class Section:
    """One section of the page: its title and its body, or (`pieces`) what makes the body piece by piece when the
    page is written, so that a long one (every request, the conversation) is never held whole."""

    title: str
    text: str = ""
    pieces: Callable[[], Iterable[str]] | None = None

    @property
    def body(self) -> str:
        return self.text if self.pieces is None else "".join(self.pieces())

    def parts(self) -> Iterable[str]:
        return (self.text,) if self.pieces is None else self.pieces()


def part_colour(name: str) -> str:
    """A category's colour: its own, or (a tool's results) one of the result shades, the same for a name on every bar."""
    colour = CATEGORY_COLOURS.get(name)
    if colour is None and name.startswith("unseen head"):  # the head's parts: greys, as its one block is
        colour = UNSEEN_SHADES[zlib.crc32(name.encode()) % len(UNSEEN_SHADES)]
    if colour is None:
        colour = RESULT_SHADES[zlib.crc32(name.encode()) % len(RESULT_SHADES)]
    return colour


def swatch(name: str) -> str:
    return swatch_of(part_colour(name))


def swatch_cost(part: str) -> str:
    return swatch_of(COST_COLOURS.get(part, "#999"))


def swatch_of(colour: str) -> str:
    """A legend's square of one colour."""
    return f"<span class=swatch style='background:{colour}'></span>"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[int] = ()) -> str:
    head = "".join(f"<th{' class=n' if i in numeric else ''}>{esc(h)}</th>" for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f"<td{' class=n' if i in numeric else ''}>{_cell(v)}</td>" for i, v in enumerate(row)) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value: Any) -> str:
    return value if isinstance(value, Markup) else esc(value)


def largest_of(figures: Sequence[tuple[str, int]], size: int) -> str:
    """The largest category of a request's (name, tokens) in the bar's order (the first of equals), and its share."""
    top = max(figures, key=itemgetter(1), default=None)
    if top is None or not size:
        return ""
    colour, shown = _painted(top[0])  # swatch(name) and esc(name), worked out once a name, not once a request
    return f"{swatch_of(colour)}{shown} {num(top[1])} ({top[1] / size:.0%})"


@lru_cache(maxsize=1024)
def _painted(name: str) -> tuple[str, str]:
    """A category's colour and its escaped name: worked out once, not once per bar (a 50k session's every-request table
    draws about 150,000 segments of a few dozen names)."""
    return part_colour(name), esc(name)


# The last bar's shape (scale, span, width, height) and each rectangle drawn in it after its x, by category and tokens,
# in one tuple (replaced whole, so a thread reads a shape with its own rectangles). Consecutive requests mostly share
# a shape, and many a category's tokens: the 50k file's every-request table draws 56,309 of its 135,399 rectangles
# (1,206 kept at most), bar_svg 0.157 -> 0.128 s by CPU. Kept for every shape instead (lru_cache) it was 0.108 s with
# 21.7 MB held; at 4,096 of them, slower than keeping none (the evictions).
_LAST: list[tuple[tuple[float, int, int, int], dict[tuple[str, int], tuple[float, str]]]] = [((0.0, 0, 0, 0), {})]


def bar_svg(
    figures: Iterable[tuple[str, int]],
    window: int | None,
    estimate: int,
    scale: float,
    width: int = 960,
    height: int = 34,
    css: str = "chart",
) -> str:
    """composition_svg's bar from each category's (name, tokens) in order, the window, the estimate and the scale."""
    span = max(window or 0, estimate, 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="Composition" viewBox="0 0 {width} {height}" '
        f'width="100%" class="{css}" preserveAspectRatio="none"><rect x="0.5" y="0.5" width="{width - 1}" '
        f'height="{height - 1}" class="frame"/>'
    ]
    shape = (scale, span, width, height)
    last, kept = _LAST[0]
    if last != shape or not scale > 0:  # -0.0 and 0.0 are equal: a scale not above 0 keeps nothing from before
        kept = {}
        _LAST[0] = (shape, kept)
    x = 1.0
    for name, tokens in figures:
        if tokens <= 0:
            continue
        rect = kept.get((name, tokens))
        if rect is None:
            w = (width - 2) * tokens * scale / span
            colour, shown = _painted(name)
            tail = f'" y="1" width="{w:.2f}" height="{height - 2}" fill="{colour}"><title>{shown}: {tokens:,} tokens</title></rect>'
            rect = kept[(name, tokens)] = (w, tail)
        parts.append(f'<rect x="{x:.2f}{rect[1]}')
        x += rect[0]
    parts.append("</svg>")
    return "".join(parts)


# The page's one stylesheet, inline (the page loads nothing): screen, dark scheme and print.
STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1000px;padding:0 16px;
color:#1d1d1f;background:#fff}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:14px;margin:16px 0 6px} dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px} dt{color:#555}
dd{margin:0} table{border-collapse:collapse;width:100%;margin:8px 0;font-variant-numeric:tabular-nums}
th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #eee;vertical-align:top;overflow-wrap:break-word}
th{background:#f6f6f6;hyphens:none} .n{text-align:right;white-space:nowrap} .wide{overflow-x:auto}
.keys .key{white-space:nowrap;margin-right:6px} .swatch.free{background:#fff;outline:1px solid #bbb}
td .swatch{margin-left:0} .mini{width:40%} .minibar{display:block;height:14px}
tr:target{background:#fff3c4} a{color:#1c5fb8}
.msgs{list-style:none;padding:0;margin:8px 0} .msgs li{margin:6px 0;padding:4px 8px;border-left:3px solid #ddd}
.msgs pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0;font:12px/1.4 ui-monospace,monospace}
.msgs .instruction{border-color:#1f7a4d} .msgs .assistant{border-color:#1c5fb8}
.msgs .action_request,.msgs .action_response{border-color:#d35400} .msgs .mark{border-color:#0f8a8a;background:#eef8f8}
.msgs .mark.fold{border-color:#7d3c98;background:#f5eef8} .msgs .req{border:0;color:#555;font-size:12px}
.preview{color:#555;font:12px ui-monospace,monospace;margin-left:8px;overflow-wrap:anywhere}
.who{font-weight:600} .at,.tag,.more{color:#777;font-size:12px} .tag{margin-left:6px} summary{cursor:pointer}
.chart{display:block;margin:8px 0}
.grid{stroke:#e6e6e6} .axis{font-size:11px;fill:#666} .bar{fill:#4a7fd0} .bar.over{fill:#c0392b}
.reported{fill:#111} .rule{stroke-width:1.5;stroke-dasharray:6 3} .compaction{stroke:#0f8a8a;stroke-width:2}
.fold{stroke:#7d3c98;stroke-width:2} .frame{fill:none;stroke:#bbb} .legend{color:#555;font-size:12px}
.swatch{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px;vertical-align:middle}
.dot{display:inline-block;width:7px;height:7px;border-radius:50%;background:#111;margin:0 4px 0 10px;vertical-align:middle}
footer{margin-top:32px;color:#777;font-size:12px}
@media print{body{max-width:none;margin:0;padding:0;font-size:11px} .chart,table,.keys,dl{break-inside:avoid}
h2,h3{break-after:avoid} tr{break-inside:avoid} .requests{font-size:10px} a{color:inherit;text-decoration:none}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact} .wide{overflow:visible}
details.transcript:not([open])>summary::after{content:" (collapsed: open it before printing to include it)"}}
@media screen and (prefers-color-scheme: dark){body{background:#1e1e1e;color:#e8e8e8} th{background:#2a2a2a} td,th{border-color:#333}
dt,.legend,footer{color:#aaa} .grid{stroke:#333} .axis{fill:#aaa} .reported{fill:#eee} .dot{background:#eee}}
"""
