"""Claude Code's `/context` output pasted into a file: the user's own figures for what the unseen head holds.

`/context` prints a line per category, `⛁ System prompt: 2.8k tokens (1.4%)` (older versions behind a grid of ⛁ ⛀ ⛶
⛝ cells on the same line; newer ones without, under "Estimated usage by category", and `Free space: 114k (57.0%)`
without the word tokens), then sections such as `MCP tools · /mcp` and `Memory files · /memory` whose `└ name: N
tokens` lines name what a category holds. The categories the model is sent before the conversation (system prompt,
system tools, MCP tools, custom agents, memory files, skills) are the head; messages, free space and the buffers are
not, and `(deferred)` tools are not sent until the model searches for them. Figures are `/context`'s own, rounded
as it prints them (one decimal of a thousand). A line that names a category but whose figure does not read is bad
input: one line naming the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from foldscope.core.model.session import ReadError

# The categories that are the head (sent before the conversation), as foldscope names them, by /context's label.
HEAD_CATEGORIES = {
    "system prompt": "system prompt",
    "system tools": "system tools",
    "mcp tools": "MCP tools",
    "custom agents": "custom agents",
    "memory files": "memory files",
    "skills": "skills",
}
# Categories /context prints that are not the head: the conversation, the space left, what is not sent.
OTHER_CATEGORIES = ("messages", "free space", "autocompact buffer", "reserved", "compact buffer")
_CELLS = "⛁⛀⛶⛝"
_CATEGORY = re.compile(r"^(?P<label>[A-Za-z][A-Za-z ]*?(?: \(deferred\))?)\s*:\s*(?P<figure>\S+)(?:\s+tokens)?\s*\((?P<share>[^)]*)\)\s*$")
_ITEM = re.compile(r"^└\s*(?P<label>.+?)\s*:?\s+(?P<figure>[0-9][0-9.,]*[kKmM]?)\s+tokens\s*$")
_SECTION = re.compile(r"^(?P<label>[A-Za-z][A-Za-z ]*?)\s*·\s*/\S+")
_FIGURE = re.compile(r"^(?P<number>[0-9][0-9,]*(?:\.[0-9]+)?)(?P<unit>[kKmM]?)$")


@dataclass
class PastedCategory:
    """One head category of a `/context` output: its figure, the line it was on, and the things it names."""

    name: str
    tokens: int
    line: int
    items: list[tuple[str, int]] = field(default_factory=list)  # (label, tokens) from its section's └ lines


@dataclass
class ContextPaste:
    """The head categories a pasted `/context` output gives, and the file it came from."""

    source: str
    categories: list[PastedCategory]
    deferred: int = 0  # tokens /context lists as deferred (not sent)

    @property
    def tokens(self) -> int:
        return sum(c.tokens for c in self.categories)


def figure(text: str) -> int | None:
    """`2.8k` -> 2800, `691` -> 691, `1.2M` -> 1200000; None when it is not a figure."""
    found = _FIGURE.match(text.strip())
    if found is None:
        return None
    number = float(found["number"].replace(",", ""))
    return round(number * {"": 1, "k": 1_000, "m": 1_000_000}[found["unit"].lower()])


def parse_context(text: str, source: str) -> ContextPaste:
    """The head categories of a `/context` output; ReadError naming the file and line when a category's figure
    does not read, or when the text holds no category of the head at all."""
    categories: dict[str, PastedCategory] = {}
    deferred = 0
    section = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip().lstrip(_CELLS + " \t").strip()
        if not line:
            continue
        if (found := _SECTION.match(line)) is not None:
            section = HEAD_CATEGORIES.get(found["label"].strip().lower(), "")
            continue
        if line.startswith("└"):
            item = _ITEM.match(line)
            if item is not None and section in categories:
                tokens = figure(item["figure"])
                if tokens is None:
                    raise ReadError(source, f"line {number}", f"{item['figure']!r} is not a token figure")
                categories[section].items.append((item["label"].strip(), tokens))
            continue
        found = _CATEGORY.match(line)
        label = (found["label"].strip().lower() if found else line.split(":", 1)[0].strip().lower()) if ":" in line else ""
        base = label.removesuffix(" (deferred)")
        if base not in HEAD_CATEGORIES and base not in OTHER_CATEGORIES:
            continue  # the header, the model line, a tip: not a category
        tokens = figure(found["figure"]) if found else None
        if tokens is None:
            raise ReadError(source, f"line {number}", f"the {base} category has no figure /context prints (such as 2.8k tokens (1.4%))")
        if label.endswith("(deferred)"):
            deferred += tokens if base in HEAD_CATEGORIES else 0
        elif base in HEAD_CATEGORIES:
            name = HEAD_CATEGORIES[base]
            if name in categories:
                raise ReadError(source, f"line {number}", f"the {base} category is given twice (line {categories[name].line} and here)")
            categories[name] = PastedCategory(name, tokens, number)
    if not categories:
        raise ReadError(source, "line 1", "no /context category of the head (System prompt, System tools, MCP tools, ...) found")
    return ContextPaste(source, list(categories.values()), deferred)


def read_context(path: str | Path) -> ContextPaste:
    """A pasted `/context` output read from a file (bad input: ReadError, one line)."""
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ReadError(source, "", f"cannot read the --head file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ReadError(source, f"line {line}", "not UTF-8 text") from None
    return parse_context(text, source)
