"""The count behind the prediction: each message as the text the provider tokenises, not its JSON escaping.

`counted` and `estimate` stay the ADR's count of the compiled payload's JSON text (Amendment 1, D3). What a
provider reports is its tokenizer over the text it reads: a Codex Responses item's text, arguments string and
output; a pi message's text; a Claude Code block's text, input and result. Counted as JSON, newlines become `\\n`
and quotes `\\"`, which adds 6% to 26% on tool outputs. A sanitised Codex file keeps only placeholders such as
`[REDACTED_TEXT len=13131 sha=036b7e47]`: their characters are counted apart, to be converted at the
stretch's tokens per character (core.request.predict), and the prediction they enter is flagged as estimated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from foldscope.core.model.session import Message, canonical_json
from foldscope.core.request.tokens import count_text

# `[REDACTED len=N]`, `[REDACTED_TEXT len=N sha=HEX]`: what a sanitiser left for N characters it removed.
PLACEHOLDER = re.compile(r"\[REDACTED(?:_[A-Z]+)? len=(\d+)(?: sha=[0-9a-fA-F]+)?\]")
MESSAGE_OVERHEAD = 4  # the tokens a provider adds per message or item (role and separators)
DEFAULT_TOKENS_PER_CHAR = 0.25  # before any visible text is counted: about four characters a token


def provider_text(message: Message) -> str:
    """The text a provider reads for one message: its text; a call's name and arguments; a result's output."""
    c = message.content
    if message.kind == "action_request":
        args = c.get("arguments", {})
        return f"{c.get('function', '')} {args if isinstance(args, str) else canonical_json(args)}"
    return message.text


@dataclass(frozen=True)
class Seen:
    """One message as the provider tokenises it: visible tokens, and the characters placeholders stand for."""

    tokens: int
    chars: int  # visible characters counted
    hidden_chars: int  # characters placeholders stand for (not counted: estimated)


def seen(message: Message) -> Seen:
    text = provider_text(message)
    hidden = 0
    if "[REDACTED" in text:
        hidden = sum(int(m.group(1)) for m in PLACEHOLDER.finditer(text))
        text = PLACEHOLDER.sub("", text)
    return Seen(count_text(text) + MESSAGE_OVERHEAD, len(text), hidden)


@dataclass(frozen=True)
class ViewCount:
    """A request's view as the provider reads it: the tokens counted, and the placeholders' characters."""

    tokens: int
    hidden_chars: int
    tokens_per_char: float  # of the visible text counted so far in the session: what a placeholder converts at

    @property
    def estimated(self) -> bool:
        """Whether part of the count stands for text the file no longer holds."""
        return self.hidden_chars > 0

    @property
    def total(self) -> int:
        return self.tokens + round(self.hidden_chars * self.tokens_per_char)


class ProviderCounter:
    """Counts views as the provider reads them, each message once (messages are immutable: memoised by id).

    The tokens per character a placeholder converts at is that of the visible text of the messages counted so
    far, in the order the views came: a view's count never depends on a later one."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Message, Seen]] = {}
        self._tokens = 0
        self._chars = 0

    def _of(self, message: Message) -> Seen:
        found = self._seen.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        s = seen(message)
        self._seen[id(message)] = (message, s)
        self._tokens += s.tokens - MESSAGE_OVERHEAD
        self._chars += s.chars
        return s

    def count(self, view: Sequence[Message]) -> ViewCount:
        tokens = hidden = 0
        for message in view:
            s = self._of(message)
            tokens += s.tokens
            hidden += s.hidden_chars
        ratio = self._tokens / self._chars if self._chars >= 1000 else DEFAULT_TOKENS_PER_CHAR
        return ViewCount(tokens, hidden, ratio)
