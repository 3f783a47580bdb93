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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from foldscope.core.formats.images import image_tokens
from foldscope.core.formats.registry import format_named, sending_format
from foldscope.core.model.running_sum import RunningSum
from foldscope.core.model.session import Message, canonical_json, sole_text
from foldscope.core.request.tokens import count_text

# `[REDACTED len=N]`, `[REDACTED_TEXT len=N sha=HEX]`: what a sanitiser left for N characters it removed.
PLACEHOLDER = re.compile(r"\[REDACTED(?:_[A-Z]+)? len=(\d+)(?: sha=[0-9a-fA-F]+)?\]")
# Kinds whose provider text is their text (Message.text): their content's string, as a rule, so cheap to read again.
PLAIN_KINDS = frozenset({"instruction", "assistant", "note", "system"})
MESSAGE_OVERHEAD = 4  # the tokens a provider adds per message or item (role and separators)
DEFAULT_TOKENS_PER_CHAR = 0.25  # before any visible text is counted: about four characters a token
# How an agent renders a message into its prompt (FormatSpec.prompt_text): the text, or None for the message's own.
Render = Callable[[Message], "str | None"] | None


def provider_text(message: Message, render: Render = None) -> str:
    """The text a provider reads for one message: its text; a call's name and arguments; a result's output; or as the
    agent renders it into the prompt (`render`: prompt_renderer's, None where the message gives its own text)."""
    c = message.content
    if message.kind == "action_request":
        args = c.get("arguments", {})
        return f"{c.get('function', '')} {args if isinstance(args, str) else canonical_json(args)}"
    if render is not None and (rendered := render(message)) is not None:
        return rendered
    return message.text


def prompt_renderer(session) -> Render:
    """How the agent that sent the session's requests renders a message into the prompt, where not as its text (its
    format's declaration, FormatSpec.prompt_text: lionagi's), or None. A Branch foldscope exported from another
    agent's session is read as that agent sent it (registry.sending_format)."""
    spec = format_named(sending_format(session))
    return spec.prompt_text if spec is not None else None


@dataclass(frozen=True, slots=True)  # slots: one a message counted
class Seen:
    """One message as the provider tokenises it: visible tokens, and the characters placeholders stand for."""

    tokens: int
    chars: int  # visible characters counted
    hidden_chars: int  # characters placeholders stand for (not counted: estimated)


def seen(message: Message, render: Render = None) -> Seen:
    text = provider_text(message, render)
    hidden = 0
    if "[REDACTED" in text:
        hidden = sum(int(m.group(1)) for m in PLACEHOLDER.finditer(text))
        text = PLACEHOLDER.sub("", text)
    return Seen(count_text(text) + image_tokens(message) + MESSAGE_OVERHEAD, len(text), hidden)


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


class SeenMemo:
    """Each message as the provider tokenises it (Seen) and its placeholders' characters, memoised by identity
    (messages are immutable), with the visible tokens and characters of every message seen so far.

    Apart from the counter that sums over it: a running sum's value function holds this memo, not the counter, so
    the counter and its sums make no reference cycle. Such a cycle would hold every message counted (and the
    session through them) until Python's cycle collector walked them: 1.3 s after `inspect` of a million tiny
    lines, where reference counting frees them as they go (tests/core/request/test_counting_frees.py)."""

    def __init__(self, render: Render = None) -> None:
        self.render = render  # provider_text's: how the sending agent renders a message (prompt_renderer)
        self.seen: dict[int, tuple[Message, Seen]] = {}
        self.hidden: dict[int, Message | tuple[Message, int]] = {}  # a message alone: no placeholder (0)
        self.tokens = 0
        self.chars = 0

    def of(self, message: Message) -> Seen:
        found = self.seen.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        s = seen(message, self.render)
        self.seen[id(message)] = (message, s)
        self.tokens += s.tokens - MESSAGE_OVERHEAD
        self.chars += s.chars
        return s

    def clone(self) -> SeenMemo:
        out = SeenMemo(self.render)
        out.seen, out.hidden, out.tokens, out.chars = dict(self.seen), dict(self.hidden), self.tokens, self.chars
        return out

    def hidden_of(self, message: Message) -> int:
        if message.kind in PLAIN_KINDS:
            sole = sole_text(message)
            if "[REDACTED" not in (sole if sole is not None else provider_text(message, self.render)):
                return 0  # read again, rather than kept: a memo entry (about 50 bytes) a message, a million on tiny lines
        found = self.hidden.get(id(message))
        if found is message:
            return 0
        if isinstance(found, tuple) and found[0] is message:  # else none, or another message that had this id
            return found[1]
        text = provider_text(message, self.render)
        n = sum(int(m.group(1)) for m in PLACEHOLDER.finditer(text)) if "[REDACTED" in text else 0
        # A message with no placeholder, nearly every one, is kept as itself: no (message, 0) tuple, 56 bytes each.
        self.hidden[id(message)] = (message, n) if n else message
        return n

    def tokens_per_char(self) -> float:
        """What a placeholder converts at: one rate for the whole session, so a request's count moves only with what
        its view gained. (The visible text's own ratio, taken once it reached 1,000 characters, re-valued every
        placeholder already in the view when it did: on a sanitised Codex file, whose visible text is tool names and
        JSON, 215,000 hidden characters jumped by 8,400 tokens in one request and its prediction missed by 13%.)
        The stretch's measured ratio (core.request.predict) converts the count to the provider's tokens."""
        return DEFAULT_TOKENS_PER_CHAR


class ProviderCounter:
    """Counts views as the provider reads them, each message once (SeenMemo).

    The tokens per character a placeholder converts at is that of the visible text of the messages counted so
    far, in the order the views came: a view's count never depends on a later one. With `tokens=False` only the
    placeholders are read (a cheap scan), and the text is tokenised only when a view holds one."""

    def __init__(self, render: Render = None) -> None:
        self.memo = memo = SeenMemo(render)
        # The sums over the last view asked about: a trace's views share their start, so each costs what changed.
        self._hidden_sum: RunningSum[Message] = RunningSum(memo.hidden_of)
        self._token_sum: RunningSum[Message] = RunningSum(lambda m: memo.of(m).tokens)
        self._seen_hidden_sum: RunningSum[Message] = RunningSum(lambda m: memo.of(m).hidden_chars)

    def clone(self) -> ProviderCounter:
        """A copy that goes on from here as this one would (its memo and sums copied), leaving this one as it is."""
        out = ProviderCounter.__new__(ProviderCounter)
        out.memo = memo = self.memo.clone()
        out._hidden_sum = self._hidden_sum.clone(memo.hidden_of)
        out._token_sum = self._token_sum.clone(lambda m: memo.of(m).tokens)
        out._seen_hidden_sum = self._seen_hidden_sum.clone(lambda m: memo.of(m).hidden_chars)
        return out

    def count(self, view: Sequence[Message], tokens: bool = True) -> ViewCount:
        if not tokens and not self._hidden_sum.total(view):
            return ViewCount(0, 0, DEFAULT_TOKENS_PER_CHAR)
        n = self._token_sum.total(view)  # first: it counts the view's new messages in order (the ratio's order)
        hidden = self._seen_hidden_sum.total(view)
        return ViewCount(n, hidden, self.memo.tokens_per_char())


# Models whose provider tokenizer is o200k_base: for them the text count is the provider's own.
O200K_MODELS = re.compile(r"^(?:gpt-|o1|o3|o4|codex|chatgpt)")
# Anthropic keeps the thinking of every earlier assistant turn in context from Claude Opus 4.5 on; earlier
# models drop it once a new user turn starts, keeping only the current turn's (its tool-use loop).
KEEPS_ALL_THINKING = re.compile(r"claude-opus-4-[5-9]|claude-(?:opus|sonnet|haiku|fable)-(?:[5-9]|\d\d)")


def reads_text(model: str | None, fmt: str) -> bool:
    """Whether the prediction counts the provider's text (an o200k model, or a format that declares it: Codex) rather
    than the compiled payload's JSON: for a Claude model the compiled count tracks the reported change better
    (docs/compile.md)."""
    name = (model or "").lower().rsplit("/", 1)[-1]
    spec = format_named(fmt)
    return (spec is not None and spec.provider_text) or bool(O200K_MODELS.match(name))


def thinking_text(message: Message) -> str | None:
    """The thinking a reader kept with a response (metadata "thinking": a text, or a list of texts), as one text."""
    raw = message.metadata.get("thinking")
    if isinstance(raw, list):
        raw = "\n".join(str(x) for x in raw)
    return raw if isinstance(raw, str) and raw else None


def thought_counter(count: Callable[[str], int]) -> Callable[[Message], int]:
    """A message's thinking tokens (an assistant's; 0 for any other), each message counted once (by identity).

    A closure over its own memo, not a counter's method: the running sum that holds it then holds no counter,
    and makes no reference cycle (SeenMemo)."""
    memo: dict[int, tuple[Message, int]] = {}

    def thought(message: Message) -> int:
        if message.kind != "assistant":
            return 0
        found = memo.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        raw = thinking_text(message)
        n = count(raw) if raw else 0
        memo[id(message)] = (message, n)
        return n

    return thought


class PredictionCounter:
    """The count a request's prediction is made from (core.request.predict), one view at a time, in order.

    For an o200k model: the provider's text (ProviderCounter). For a Claude model: the compiled payload's
    count plus the thinking the provider keeps in context (the current turn's, or every turn's from Opus 4.5 on),
    which the compiled payload leaves out. Either way a placeholder's characters join at the visible text's
    tokens per character."""

    def __init__(self, fmt: str, count: Callable[[str], int] = count_text, render: Render = None) -> None:
        """`count`: how a text is counted (a Counter's count_text keeps what it counted for a reopened session);
        `render`: how the sending agent renders a message into the prompt (prompt_renderer)."""
        self.format = fmt
        self.text = ProviderCounter(render)
        # The assistant turns' thinking over the view, with where each instruction is: all of it for a model that keeps
        # every turn's, what follows the last instruction (the current turn's) for one that does not.
        self._thinking_sum: RunningSum[Message] = RunningSum(thought_counter(count), mark=lambda m: m.kind == "instruction")
        # Each model's (reads_text, keeps every turn's thinking), asked once a model, not once a request.
        self._models: dict[str | None, tuple[bool, bool]] = {}

    def clone(self) -> PredictionCounter:
        """A copy that goes on from here as this one would, leaving this one as it is (a kept trace's counting pass,
        core.request.trace_resume); the thinking memo is shared (by identity, the same count either way)."""
        out = PredictionCounter.__new__(PredictionCounter)
        out.format, out.text, out._thinking_sum = self.format, self.text.clone(), self._thinking_sum.clone()
        out._models = self._models
        return out

    def _model(self, model: str | None) -> tuple[bool, bool]:
        found = self._models.get(model)
        if found is None:
            found = self._models[model] = (reads_text(model, self.format), bool(KEEPS_ALL_THINKING.search((model or "").lower())))
        return found

    def thinking(self, view: Sequence[Message], model: str | None) -> int:
        if self._model(model)[1]:
            return self._thinking_sum.total(view)
        return self._thinking_sum.since_last_mark(view)  # the current turn's: a turn may run thousands of calls

    def count(self, view: Sequence[Message], compiled: int, model: str | None) -> ViewCount:
        if self._model(model)[0]:
            return self.text.count(view)
        text = self.text.count(view, tokens=False)
        return ViewCount(compiled + self.thinking(view, model), text.hidden_chars, text.tokens_per_char)
