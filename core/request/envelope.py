"""The result envelope (ADR-0130 Amendment 4): a round's calls and results as minimal YAML text blocks, deterministically.

`minimal_yaml(value)` writes JSON-like values (mappings with text keys, lists, text, numbers,
booleans, null) as block-style YAML, the same bytes for the same value every time:
  - a mapping is one `key: value` line per key, in the mapping's own order; a nested mapping or
    list goes on the lines below, a mapping indented two spaces, a list at its key's indent;
  - a list is one `- item` per item; an item that is a mapping starts on the dash's line;
  - text is plain when it cannot be read as anything else (letters, digits and `_ ./()-+=@,`,
    starting with a letter or `_`, not a YAML 1.1 word such as `yes` or `null`); text with line
    breaks and nothing YAML would alter is a literal block (`|-`, `|` or `|+` by its trailing
    newlines); any other text is double-quoted JSON with YAML's non-printable characters escaped;
  - null, true, false and numbers as JSON writes them; an empty mapping `{}`, an empty list `[]`.
`yaml.safe_load(minimal_yaml(v)) == v` for every such value (tests/core/test_envelope.py).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_ ./()\-+=@,]*")
_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"}
# Characters a YAML reader refuses raw, or reads as a line break inside quotes.
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
_BLOCK_BAD = re.compile("[\r\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


def minimal_yaml(value: Any) -> str:
    """`value` as block-style YAML text ending in a newline; TypeError/ValueError for what YAML here cannot hold."""
    lines: list[str] = []
    _emit(value, 0, lines, None)
    return "\n".join(lines) + "\n"  # the last line's break ends a literal block's text


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def quoted(text: str) -> str:
    return _UNSAFE.sub(_escape, json.dumps(text, ensure_ascii=False))


def _plain_ok(text: str) -> bool:
    return bool(_PLAIN.fullmatch(text)) and text == text.rstrip() and text.lower() not in _WORDS


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"a mapping key must be text, not {type(key).__name__}")
    return key if _plain_ok(key) else quoted(key)


def _block_ok(text: str) -> bool:
    return "\n" in text and not text[0].isspace() and not _BLOCK_BAD.search(text)


def _scalar(value: Any) -> str | None:
    """A one-line scalar, or None for text that goes in a literal block."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no YAML form here")
        text = json.dumps(value)
        if "e" in text and "." not in text:  # YAML 1.1 reads a float only with a dot in its mantissa
            text = text.replace("e", ".0e", 1)
        return text
    if isinstance(value, str):
        if _plain_ok(value):
            return value
        return None if _block_ok(value) else quoted(value)
    if isinstance(value, Mapping) and not value:
        return "{}"
    if isinstance(value, (list, tuple)) and not value:
        return "[]"
    if isinstance(value, (Mapping, list, tuple)):
        raise AssertionError("containers are not scalars")
    raise TypeError(f"a {type(value).__name__} has no YAML form here")


def _literal(text: str, pad: str) -> tuple[str, list[str]]:
    """The block indicator and the indented content lines of a literal block."""
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    indicator = "|-" if trailing == 0 else "|" if trailing == 1 else "|+"
    lines = [pad + line if line else "" for line in body.split("\n")]
    lines.extend("" for _ in range(trailing - 1))
    return indicator, lines


def _is_container(value: Any) -> bool:
    return isinstance(value, (Mapping, list, tuple)) and len(value) > 0


def _emit(value: Any, indent: int, lines: list[str], lead: str | None) -> None:
    """Append `value` at `indent`; `lead` is the text its first line starts with (a key, or a dash)."""
    pad = " " * indent
    if isinstance(value, Mapping) and value:
        first = True
        for key, item in value.items():
            start = (lead if first and lead is not None else pad) + _key(key) + ":"
            first = False
            _item(item, indent, start, lines)
        return
    if isinstance(value, (list, tuple)) and value:
        for item in value:
            dash = pad + "-"
            if isinstance(item, Mapping) and item:
                _emit(item, indent + 2, lines, dash + " ")
            elif _is_container(item):
                lines.append(dash)
                _emit(item, indent + 2, lines, None)
            else:
                _item(item, indent, dash, lines)
        return
    scalar = _scalar(value)
    if scalar is None:
        indicator, body = _literal(value, pad + "  ")
        lines.append((lead or pad) + indicator)
        lines.extend(body)
    else:
        lines.append((lead or pad) + scalar)


def _item(item: Any, indent: int, start: str, lines: list[str]) -> None:
    """A value after `key:` or `-` at `indent`: on the same line when it is a scalar, else below."""
    if isinstance(item, Mapping) and item:
        lines.append(start)
        _emit(item, indent + 2, lines, None)
    elif isinstance(item, (list, tuple)) and item:
        lines.append(start)
        _emit(item, indent, lines, None)  # a list under a key stands at the key's indent
    else:
        scalar = _scalar(item)
        if scalar is None:
            indicator, body = _literal(item, " " * (indent + 2))
            lines.append(f"{start} {indicator}")
            lines.extend(body)
        else:
            lines.append(f"{start} {scalar}")


def calls_text(entries: list[dict[str, Any]]) -> str:
    """A response's tool calls as the envelope writes them: minimal_yaml({"ToolCalls": [...]})."""
    return minimal_yaml({"ToolCalls": entries})


def results_text(entries: list[dict[str, Any]]) -> str:
    """A round's tool results as one block: minimal_yaml({"ToolResults": [...]})."""
    return minimal_yaml({"ToolResults": entries})
