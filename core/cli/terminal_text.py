"""Session text made safe for a terminal: its control characters made visible (core.cli.output re-exports it; this
module imports only `re`, so the status line's client, which runs once per assistant message, need not load argparse)."""

from __future__ import annotations

import re

# C0 controls but newline and tab, DEL, C1 controls (a lone 0x9b is CSI to some terminals), and the
# bidirectional overrides that make text read in another order than it is stored.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Half a surrogate pair in a session's text (an emoji a tool cut), which no terminal's UTF-8 can take: its escape. Those
# a file name's bytes that are not UTF-8 are held as (U+DC80 to U+DCFF) are shown as the bytes' escapes instead.
_HALF = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """Text from a session file, safe to print: each control character becomes its escape (ESC -> \\x1b),
    so nothing in a session can retitle the terminal, write the clipboard (OSC 52) or clear the screen.
    Newline and tab stay as they are. Every command's text output passes through here (core.cli.main).
    A file name's bytes that are not UTF-8 (held as surrogates) are shown as their escapes too."""
    text = _HALF.sub(_visible, text)
    if any("\udc80" <= c <= "\udcff" for c in text):
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _UNSAFE.sub(_visible, text)
