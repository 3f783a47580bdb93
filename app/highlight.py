"""Message content to highlighted HTML with Pygments: JSON, YAML, diffs and code by file extension."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import DiffLexer, JsonLexer, TextLexer, YamlLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

# Past this many characters the rest of a block is shown plain: highlighting stays instant.
HIGHLIGHT_LIMIT = 40_000
_PATH_KEYS = ("path", "file_path", "filename", "file", "notebook_path")
BODY_KEYS = ("content", "stdout", "output", "text", "result", "patch", "diff")


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def guess_lexer(text: str, path: str | None = None) -> Lexer:
    """JSON, a diff, YAML, or code named by the file path the call worked on; else plain text."""
    stripped = text.lstrip()
    if stripped[:1] in "{[":
        try:
            json.loads(stripped)
            return JsonLexer()
        except ValueError:
            pass
    head = stripped[:400]
    if head.startswith(("--- ", "diff --git", "Index: ")) or "\n@@ " in head or head.startswith("@@ "):
        return DiffLexer()
    if path:
        try:
            named = get_lexer_for_filename(path, stripnl=False)
        except ClassNotFound:
            named = None
        # A .json file's call whose text is not JSON (an Edit's "<tool_use_error>..." on settings.json) was lexed as
        # JSON: letters inside its words came out bold and its words as errors. JSON parsed is taken above.
        if named is not None and not isinstance(named, JsonLexer):
            return named
    if head.startswith("---\n") or head.startswith("%YAML"):
        return YamlLexer()
    return TextLexer()


def block_html(text: str, lexer: Lexer, style: str, lines: Sequence[int] = ()) -> str:
    """One highlighted, wrapped, monospaced block; `lines` (1-based) get the style's highlight background."""
    formatter = HtmlFormatter(style=style, noclasses=True, nowrap=True, hl_lines=list(lines))
    head, rest = text[:HIGHLIGHT_LIMIT], text[HIGHLIGHT_LIMIT:]
    body = highlight(head, lexer, formatter) if not isinstance(lexer, TextLexer) else html.escape(head)
    if rest:
        body += html.escape(rest)
    return f'<pre style="white-space: pre-wrap; margin: 0;">{body}</pre>'


def section(title: str, body_html: str) -> str:
    return f'<p style="margin: 10px 0 4px 0;"><b>{html.escape(title)}</b></p>{body_html}'


def call_path(arguments: Any) -> str | None:
    """The file a tool call worked on, for choosing a lexer for its arguments or its result."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    if isinstance(arguments, Mapping):
        for key in _PATH_KEYS:
            value = arguments.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def value_html(title: str, value: Any, style: str, path: str | None = None) -> str:
    """A value as sections: a string highlighted by its guessed language (a JSON object in a string read as
    the object); a mapping's string fields with line breaks (a file read's content, a shell's stdout, a
    prompt) each shown on their own with their lines, after the rest as JSON, where "\n" would hide them."""
    if isinstance(value, str):
        parsed = _json_object(value)
        if parsed is None:
            return section(title, block_html(value, guess_lexer(value, path), style))
        value = parsed
    if isinstance(value, Mapping):
        bodies = [k for k, v in value.items() if isinstance(v, str) and "\n" in v]
        if bodies:
            bodies.sort(key=lambda k: k not in BODY_KEYS)  # the body proper (content, stdout, …) first
            rest = {k: v for k, v in value.items() if k not in bodies}
            parts = section(title, block_html(pretty_json(rest), JsonLexer(), style)) if rest else ""
            for key in bodies:
                parts += section(f"{title}: {key}", block_html(value[key], guess_lexer(value[key], path), style))
            return parts
    return section(title, block_html(pretty_json(value), JsonLexer(), style))


def _json_object(text: str) -> dict[str, Any] | None:
    """The object a string holds as JSON (a call's arguments as some agents record them), else None."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def content_html(kind: str, content: Mapping[str, Any], style: str) -> str:
    """The message's content, each part highlighted the way a reader expects it."""
    c = dict(content)
    if kind == "system":
        return value_html("System message", c.pop("system_message", ""), style) + _rest_html(c, style)
    if kind == "instruction":
        return value_html("Instruction", c.pop("instruction", ""), style) + _rest_html(c, style)
    if kind in ("assistant", "note"):
        title = "Note" if kind == "note" else "Assistant response"
        return value_html(title, c.pop("assistant_response", ""), style) + _rest_html(c, style)
    path = call_path(c.get("arguments"))
    function = c.pop("function", "")
    # A result opens on its output, what the reader came for; the call that asked for it follows.
    parts = value_html("Output", c.pop("output", ""), style, path) if kind == "action_response" else ""
    parts += section("Function", f"<pre style='margin:0'>{html.escape(str(function))}</pre>")
    parts += value_html("Arguments", c.pop("arguments", {}), style)
    return parts + _rest_html(c, style)


def _rest_html(rest: Mapping[str, Any], style: str) -> str:
    if not rest:
        return ""
    return section("Other content fields", block_html(pretty_json(dict(rest)), JsonLexer(), style))


def json_html(value: Any, style: str) -> str:
    return block_html(pretty_json(value), JsonLexer(), style)


def plain_tip(text: str) -> str:
    """A tooltip that shows `text` as the characters it is: Qt renders any tooltip that looks like HTML as
    rich text, so text from a session file (an id, a file name) is escaped and its lines kept."""
    return f"<p style='white-space:pre'>{html.escape(text)}</p>" if text else ""
