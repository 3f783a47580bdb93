"""A Claude Code-shaped session whose long texts repeat only as often as asked (issue 48's repetition knob).

Written from the format as docs/readers.md and core/formats/claude_code describe it, not from a recorded session:
one JSON object a line, each naming its parent (`parentUuid`); a response split over assistant lines sharing
`message.id` (thinking with its signature, an answer, tool calls), each carrying the response's `usage`; a tool's
result as a user line (`tool_result` naming its `tool_use_id`) with the `toolUseResult` Claude Code keeps beside it;
progress and file-history lines between them; a `compact_boundary` and its summary when the modelled window passes
160k tokens.

The text is made up as it goes: words drawn by Zipf's law from the o200k vocabulary's lowercase word tokens and
some invented ones, identifiers joined from them,
numbers, code lines with indentation and punctuation. Two texts drawn apart are never equal, so a session at
`repeat=0` reads nothing twice, unlike bench_import's sessions (cut from sixteen standard-library modules, 47-91% of
their long texts' characters found again). At `repeat=R` each long text (PASSAGES_FROM characters or more) is, with
probability R, one written earlier in the session again (a file read again, a test run again); `Stats` counts the
share of long texts' characters that were copies, which is what the knob means.

    .venv/bin/python bench/fresh_session.py OUT.jsonl --messages 20000 [--repeat 0.5]
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

VOCABULARY = Path(__file__).resolve().parent.parent / "resources" / "o200k_base.tiktoken"
LONG = 1024  # a long text: core.request.passages.PASSAGES_FROM, what the repetition knob applies to
TOOLS = (("Bash", 39), ("Read", 12), ("TodoWrite", 6), ("Grep", 7), ("Edit", 8), ("Glob", 3), ("Write", 2))
# Tool result sizes in characters: median about 300, one in ten over 6,000.
RESULT_SIZES = ((20, 12), (150, 15), (300, 20), (1000, 20), (3000, 14), (6500, 10), (15000, 5), (32000, 2))
SYLLABLES = ("ka", "ri", "mo", "tel", "san", "dor", "vi", "lu", "pes", "an", "gor", "ith", "nu", "bra", "cel", "fo", "zin", "ul")
SYLLABLES += ("tra", "me", "sko", "ph", "yr", "den", "ol", "qu", "ex", "wa", "bi", "ston", "er", "ha", "ju", "lim", "os", "tic")
PUNCTUATION = (".", ".", ",", ",", ",", ";", ":", "?", " -", "!")
OPERATORS = (" = ", " == ", " += ", ", ", "(", ")", "[", "]", ".", " -> ", ": ", " and ", " or ", " + ", " * ", " % ")
KEYWORDS = ("def ", "return ", "if ", "for ", "while ", "class ", "import ", "with ", "raise ", "yield ", "elif ", "assert ")


@dataclass
class Stats:
    """What the knob did: long texts written and the characters of those that were earlier ones again."""

    long_texts: int = 0
    long_chars: int = 0
    repeated_texts: int = 0
    repeated_chars: int = 0

    @property
    def share(self) -> float:
        return self.repeated_chars / self.long_chars if self.long_chars else 0.0


class Words:
    """Made-up text: prose, identifiers and code lines from an invented vocabulary, never the same twice."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        # Words are o200k's own lowercase word tokens, in the tokenizer's rank order (its merges' order, about how
        # common each is), with one in ten made up of syllables (names, jargon: several tokens each) placed among
        # them; drawn by Zipf's law (weight 1 / rank), as words are in any text, so a common word comes back often
        # as in real prose and code, while a long text as a whole never does.
        real = []
        for line in VOCABULARY.read_bytes().splitlines():
            word = base64.b64decode(line.split()[0])
            if len(word) >= 4 and word[:1] == b" " and word[1:].isalpha() and word[1:].islower() and word[1:].isascii():
                real.append(word[1:].decode())  # the file lists tokens by rank
        made = set()
        while len(made) < len(real) // 9:
            made.add("".join(rng.choices(SYLLABLES, k=rng.choice((2, 2, 3, 3, 4)))))
        self.vocabulary = real + sorted(made)
        placed = [rng.randrange(len(real)) for _ in made]  # each made-up word takes a random rank among the real
        weights = [1 / (rank + 10) for rank in range(len(real))] + [1 / (rank + 10) for rank in placed]
        self.cumulative = list(itertools.accumulate(weights))

    def draw(self, k: int) -> list[str]:
        return self.rng.choices(self.vocabulary, cum_weights=self.cumulative, k=k)

    def prose(self, chars: int) -> str:
        rng, out, size = self.rng, [], 0
        while size < chars:
            words = self.draw(rng.randint(6, 24))
            words[0] = words[0].capitalize()
            if rng.random() < 0.3:
                words[rng.randrange(len(words))] = str(rng.randint(0, 99_999))
            sentence = " ".join(words) + rng.choice(PUNCTUATION)
            out.append(sentence)
            size += len(sentence) + 1
        return " ".join(out)[:chars]

    def name(self) -> str:
        return "_".join(self.draw(self.rng.choice((1, 2, 2, 3))))

    def code_lines(self, chars: int) -> list[str]:
        rng, out, size, depth = self.rng, [], 0, 0
        while size < chars:
            if rng.random() < 0.12:
                line = ""
            else:
                parts = [rng.choice(KEYWORDS)] if rng.random() < 0.4 else []
                for _ in range(rng.randint(1, 5)):
                    parts += [self.name() if rng.random() < 0.8 else str(rng.randint(0, 4096)), rng.choice(OPERATORS)]
                line = "    " * depth + "".join(parts).rstrip()
                if rng.random() < 0.15:
                    line += "  # " + self.prose(rng.randint(20, 70))
            depth = max(0, min(4, depth + rng.choice((-1, 0, 0, 0, 1))))
            out.append(line)
            size += len(line) + 1
        return out

    def markdown(self, chars: int) -> str:
        rng, parts, size = self.rng, [], 0
        while size < chars:
            roll = rng.random()
            if roll < 0.15:
                part = "## " + self.prose(rng.randint(15, 50))
            elif roll < 0.45:
                part = "\n".join(
                    f"- **{self.name()}**: `{self.name()}()` {self.prose(rng.randint(30, 90))}" for _ in range(rng.randint(2, 5))
                )
            elif roll < 0.6:
                part = "```python\n" + "\n".join(self.code_lines(rng.randint(150, 900))) + "\n```"
            else:
                part = self.prose(rng.randint(80, 500))
            parts.append(part)
            size += len(part) + 2
        return "\n\n".join(parts)


class Texts:
    """Each text of the session, fresh or (long, with probability `repeat`) one of its kind written before."""

    def __init__(self, rng: random.Random, repeat: float) -> None:
        self.rng, self.repeat, self.words, self.stats = rng, repeat, Words(rng), Stats()
        self.earlier: dict[str, list] = {}

    def make(self, kind: str, text):
        """The fresh text (a string or lines) of this kind, or when it is long, with probability `repeat`, a long one
        written before in its place (judged on the fresh text's size, so the knob is the share of long texts whatever
        size each was asked at); counted in stats."""
        earlier = self.earlier.setdefault(kind, [])
        size = len(text) if isinstance(text, str) else sum(len(line) + 1 for line in text)
        if size < LONG:
            return text
        if earlier and self.rng.random() < self.repeat:
            text, size = self.rng.choice(earlier)
            self.stats.repeated_texts += 1
            self.stats.repeated_chars += size
        else:
            earlier.append((text, size))
        self.stats.long_texts += 1
        self.stats.long_chars += size
        return text


def tool_call(texts: Texts, name: str, size: int) -> tuple[dict, str, object]:
    """(input, result text, toolUseResult) of one call of a Claude Code tool, its result about `size` characters."""
    rng, words = texts.rng, texts.words
    path = f"/home/user/project/{words.name()}/{words.name()}.py"
    if name in ("Read", "Edit", "Grep", "Write"):
        lines = texts.make("file", words.code_lines(size))
        first = rng.randint(1, 400)
    if name == "Read":
        body = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines, first))
        file = {"filePath": path, "content": "\n".join(lines), "numLines": len(lines), "startLine": first, "totalLines": first + len(lines)}
        return {"file_path": path}, body, {"type": "text", "file": file}
    if name == "Grep":
        body = "\n".join(f"{path}:{n}:{line}" for n, line in enumerate(lines, first) if line.strip())
        return {"pattern": words.name(), "output_mode": "content", "-n": True}, body, {"mode": "content", "numFiles": 1, "content": body}
    if name == "Edit":
        old, new = "\n".join(lines[:6]), "\n".join(words.code_lines(200))
        body = f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n"
        body += "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines, first))
        kept = {"filePath": path, "oldString": old, "newString": new, "originalFile": "\n".join(lines), "userModified": False}
        return {"file_path": path, "old_string": old, "new_string": new}, body, kept
    if name == "Write":
        content = "\n".join(lines)
        return {"file_path": path, "content": content}, f"File created successfully at: {path}", {"type": "create", "filePath": path}
    if name == "Glob":
        names = [f"/home/user/project/{words.name()}/{words.name()}.py" for _ in range(rng.randint(1, 8))]
        return {"pattern": "**/*.py"}, "\n".join(names), {"filenames": names, "numFiles": len(names), "truncated": False}
    if name == "TodoWrite":
        todos = [
            {"content": words.prose(50), "status": rng.choice(("pending", "in_progress", "completed"))} for _ in range(rng.randint(2, 6))
        ]
        return {"todos": todos}, "Todos have been modified successfully.", {"oldTodos": [], "newTodos": todos}
    body = texts.make("output", "\n".join(words.code_lines(size) if rng.random() < 0.5 else words.prose(size).split(". ")))
    command = f"{rng.choice(('pytest -q', 'git log --oneline', 'grep -rn', 'ls -la', 'make'))} {words.name()}"
    return {"command": command, "description": words.prose(40)}, body, {"stdout": body, "stderr": "", "interrupted": False}


def generate(path: Path, messages: int, repeat: float = 0.0, seed: int = 11) -> Stats:
    """Write a session of about `messages` messages (assistant and user lines) to path; returns what the knob did."""
    rng = random.Random(seed)
    texts = Texts(rng, repeat)
    words = texts.words
    tool_names = [name for name, weight in TOOLS for _ in range(weight)]
    sizes = [size for size, weight in RESULT_SIZES for _ in range(weight)]
    base = {"sessionId": "0f7c-fresh-bench", "version": "2.0.76", "cwd": "/home/user/project", "gitBranch": "main"}
    base |= {"userType": "external", "isSidechain": False}
    written, n, window, clock, parent = 0, 0, 18_000, 1_767_000_000.0, None
    with open(path, "w", encoding="utf-8") as out:

        def emit(entry: dict, counts: bool = True) -> None:
            nonlocal written, parent, clock
            clock += rng.uniform(0.5, 20)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(clock)) + f".{int(clock % 1 * 1000):03d}Z"
            out.write(json.dumps({"parentUuid": parent, **base, **entry, "timestamp": stamp}, ensure_ascii=False) + "\n")
            parent = entry.get("uuid", parent)
            written += counts

        emit({"type": "file-history-snapshot", "messageId": "snap0", "snapshot": {"trackedFileBackups": {}}}, counts=False)
        emit({"type": "user", "uuid": "u0", "message": {"role": "user", "content": words.prose(400)}})
        while written < messages:
            n += 1
            blocks: list[dict] = []
            if rng.random() < 0.75:
                size = rng.choice((200, 600, 1500, 4000))
                thinking = texts.make("thinking", words.prose(size))
                signature = "".join(
                    rng.choices("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", k=rng.choice((600, 1200)))
                )
                blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
            if rng.random() < 0.35:
                chars = rng.choice((100, 400, 1500, 5000))
                blocks.append({"type": "text", "text": texts.make("answer", words.markdown(chars))})
            tools = rng.choices(tool_names, k=rng.choice((1, 1, 1, 2, 3)))
            made = [tool_call(texts, name, rng.choice(sizes)) for name in tools]
            ids = [f"toolu_{n:07d}{i}" for i in range(len(tools))]
            blocks += [{"type": "tool_use", "id": ids[i], "name": name, "input": made[i][0]} for i, name in enumerate(tools)]
            added = sum(len(json.dumps(b)) for b in blocks) // 4 + sum(len(m[1]) for m in made) // 4
            fresh, write = rng.randint(3, 20), max(100, added)
            usage = {
                "input_tokens": fresh,
                "cache_read_input_tokens": window,
                "cache_creation_input_tokens": write,
                "service_tier": "standard",
            }
            for i, block in enumerate(blocks):
                last = i == len(blocks) - 1
                message = {"model": "claude-sonnet-4-5-20250929", "id": f"msg_{n:07d}", "type": "message", "role": "assistant"}
                message |= {"content": [block], "stop_reason": "tool_use" if last else None, "stop_sequence": None}
                message["usage"] = {**usage, "output_tokens": 300 if last else 1}
                emit({"type": "assistant", "uuid": f"a{n}_{i}", "requestId": f"req_{n:07d}", "message": message})
            for i, (_, body, kept) in enumerate(made):
                progress = {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:" + tools[i]}
                emit({"type": "progress", "uuid": f"p{n}_{i}", "toolUseID": ids[i], "data": progress}, counts=False)
                result = {"tool_use_id": ids[i], "type": "tool_result", "content": body}
                if tools[i] == "Bash" and rng.random() < 0.08:
                    result |= {"content": "Exit code 1\n" + body[:300], "is_error": True}
                emit({"type": "user", "uuid": f"r{n}_{i}", "toolUseResult": kept, "message": {"role": "user", "content": [result]}})
            window += write + fresh
            if window > 160_000:
                compact = {"trigger": "auto", "preTokens": window}
                emit(
                    {
                        "type": "system",
                        "subtype": "compact_boundary",
                        "uuid": f"b{n}",
                        "content": "Conversation compacted",
                        "compactMetadata": compact,
                    }
                )
                summary = "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n"
                summary += texts.make("summary", words.markdown(4000))
                emit({"type": "user", "uuid": f"s{n}", "isCompactSummary": True, "message": {"role": "user", "content": summary}})
                window = 18_000 + len(summary) // 4
            elif rng.random() < 0.08:
                emit({"type": "user", "uuid": f"u{n}", "message": {"role": "user", "content": words.prose(rng.randint(40, 600))}})
    return texts.stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--repeat", type=float, default=0.0, help="chance a long text is an earlier one again (0 to 1)")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    stats = generate(args.out, args.messages, args.repeat, args.seed)
    print(
        f"{args.out}: {args.out.stat().st_size / 1e6:.1f} MB; {stats.long_texts:,} long texts, {stats.repeated_texts:,} of them "
        f"earlier ones again, {stats.share:.0%} of their characters"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
