"""A seeded generator of a realistic coding-agent session in the native format (the bundled demo)."""

from __future__ import annotations

import argparse
import json
import random
import sys
import uuid
from importlib import resources
from pathlib import Path
from typing import Any

from foldscope.core.formats.lionagi import build_trace
from foldscope.core.formats.lionagi_write import message_dict
from foldscope.core.model.session import FullRecord, Message, Session

MODEL = "anthropic/claude-haiku-5-5"
LISTING_CHARS = 100_045  # the ADR's oversized shell result (Amendment 3's test size)
WIDE_ROUND_RESULTS = 16  # one round with sixteen results (Amendment 3's test)
START = 1795990000.0
SYSTEM = (
    "You are a careful coding agent working in a Python repository. Read before you edit, keep "
    "changes small, run the tests after each change, and say plainly what you found."
)
TASK = (
    "The config loader ignores FOLDSCOPE_HOME when a profile is given. Find where the profile is "
    "resolved, explain the bug, and propose a minimal fix with a test."
)
_WORDS = [
    "config",
    "profile",
    "loader",
    "cache",
    "session",
    "registry",
    "settings",
    "paths",
    "store",
    "policy",
    "report",
    "parser",
    "schema",
    "window",
    "budget",
    "record",
    "events",
    "history",
]
_VERBS = ["load", "resolve", "merge", "validate", "read", "write", "parse", "render", "apply", "build"]


def demo_path() -> Path:
    """The bundled demo session file, resources/demo_session.json."""
    return Path(str(resources.files("foldscope.resources").joinpath("demo_session.json")))


def generate(
    seed: int = 7, rounds: int = 12, listing_chars: int = LISTING_CHARS, wide_round_results: int = WIDE_ROUND_RESULTS, fold: bool = True
) -> Session:
    """A deterministic session: a system message, the task, `rounds` rounds of tool calls, an answer.

    The round before the last lists a folder of exactly `listing_chars` characters; the round in
    the middle reads `wide_round_results` files at once. With `fold`, a tool_io fold after two
    thirds of the rounds puts a note in the view in place of the early calls and results, and
    the manifest records it. Every assistant response has an api_usage entry in the manifest.
    """
    return _Builder(random.Random(seed), rounds, listing_chars, wide_round_results, fold).build()


class _Builder:
    def __init__(self, rng: random.Random, rounds: int, listing_chars: int, wide: int, fold: bool) -> None:
        self.rng, self.rounds, self.listing_chars, self.wide, self.fold = rng, max(rounds, 3), listing_chars, wide, fold
        self.clock = START
        self.messages: list[Message] = []
        self.view: list[str] = []
        self.usage: list[dict[str, Any]] = []
        self.folds: list[dict[str, Any]] = []
        self.branch_id = self.new_id()
        self.cached = 0  # tokens the provider holds in its prompt cache from the previous request
        self.view_chars = 0  # size of the view so far, kept as messages come so that big sessions stay fast

    def new_id(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def add(
        self,
        kind: str,
        content: dict[str, Any],
        metadata: dict[str, Any] | None = None,
        message_id: str | None = None,
        in_view: bool = True,
    ) -> Message:
        self.clock += self.rng.uniform(0.2, 4.0)
        lion = {
            "system": "system.System",
            "instruction": "instruction.Instruction",
            "assistant": "assistant_response.AssistantResponse",
            "note": "assistant_response.AssistantResponse",
            "action_request": "action_request.ActionRequest",
            "action_response": "action_response.ActionResponse",
        }[kind]
        message = Message(
            message_id or self.new_id(),
            kind,
            round(self.clock, 6),
            content,
            {"lion_class": "lionagi.protocols.messages." + lion, **(metadata or {})},
        )
        self.messages.append(message)
        if in_view:
            self.view.append(message.id)
            self.view_chars += _size(message)
        return message

    def build(self) -> Session:
        self.add("system", {"system_message": SYSTEM})
        self.add(
            "instruction",
            {"instruction": TASK, "guidance": "Be brief; cite file:line.", "prompt_context": [{"repo": "acme/settings", "branch": "main"}]},
        )
        wide_at, listing_at = self.rounds // 2, self.rounds - 2
        fold_at = self.rounds // 3 + 1 if self.fold else -1  # before the wide round, so it stays in view
        for k in range(self.rounds):
            if k == fold_at:
                self.fold_early_rounds()
            if k == listing_at:
                calls = [("bash", {"command": "ls -laR src tests"}, self.listing(self.listing_chars))]
            elif k == wide_at:
                calls = [self.read_call(small=True) for _ in range(self.wide)]
            elif k % 3 == 1:
                calls = [self.search_call()]
            else:
                calls = [self.read_call() for _ in range(self.rng.randint(1, 2))]
            self.round(k, calls)
        self.respond(
            "The bug is in `resolve_profile`: it builds the profile path from the default home before "
            "reading FOLDSCOPE_HOME, so the override is never seen. Fix: read the environment first "
            "and pass the home into `profile_path`. I added a test that sets FOLDSCOPE_HOME and a "
            "profile and checks the resolved path."
        )
        return self.session()

    def round(self, k: int, calls: list[tuple[str, dict[str, Any], Any]]) -> None:
        names = ", ".join(sorted({f for f, _, _ in calls}))
        self.respond(f"Round {k + 1}: calling {names} ({len(calls)} call{'s' if len(calls) > 1 else ''}).")
        pairs = [(self.new_id(), self.new_id()) for _ in calls]
        for (function, arguments, _), (request_id, response_id) in zip(calls, pairs):
            self.add(
                "action_request", {"function": function, "arguments": arguments, "action_response_id": response_id}, message_id=request_id
            )
        for (function, arguments, output), (request_id, response_id) in zip(calls, pairs):
            self.add(
                "action_response",
                {"function": function, "arguments": arguments, "output": output, "action_request_id": request_id},
                message_id=response_id,
            )

    def respond(self, text: str) -> None:
        """An assistant response, and the usage the provider reported for the request it answers."""
        reported = int(self.view_chars / 3.6 * 1.3)  # chars per token, and the ADR's observed provider scale
        read = min(self.cached, reported)
        fresh = self.rng.randint(3, 40)
        write = max(reported - read - fresh, 0)
        message = self.add("assistant", {"assistant_response": text})
        self.usage.append(
            {
                "request": len(self.usage),
                "response_id": message.id,
                "at": message.created_at,
                "model": MODEL,
                "input_tokens": fresh,
                "cache_read_input_tokens": read,
                "cache_creation_input_tokens": write,
                "output_tokens": self.rng.randint(40, 400),
            }
        )
        self.cached = reported

    def fold_early_rounds(self) -> None:
        """A tool_io fold: calls and results before the kept tail of six leave the view for one note."""
        in_view, tail = set(self.view), set(self.view[-6:])
        folded = [m for m in self.messages if m.id in in_view and m.id not in tail and m.kind in ("action_request", "action_response")]
        if not folded:
            return
        first = self.messages.index(folded[0])
        calls = [m for m in folded if m.kind == "action_request"]
        results = {m.id: m for m in self.messages if m.kind == "action_response"}
        listed = "\n".join(f"- {m.content['function']} {json.dumps(m.content['arguments'])}" for m in calls[:50])
        text = (
            f"[CONTEXT COMPACTION] The host folded {len(folded)} earlier messages to keep the next "
            f"request under the input ceiling. Nothing was deleted: read_result(index) returns any "
            f"of them. Calls folded:\n{listed}"
        )
        place = self.view.index(folded[0].id)
        # The note records the first index it replaced and every index it replaced, so a reader can
        # rebuild the views of the requests after it (core.formats.lionagi_views).
        replaced = [self.messages.index(m) for m in folded]
        note = self.add("note", {"assistant_response": text}, {"context_first_index": first, "context_replaced": replaced}, in_view=False)
        gone = {m.id for m in folded}
        self.view = [i for i in self.view if i not in gone]
        self.view.insert(place, note.id)
        self.view_chars += _size(note) - sum(_size(m) for m in folded)
        self.folds.append(
            {
                "at": note.created_at,
                "reason": "threshold",
                "stage": "tool_io",
                "kept_tail": 6,
                "messages_folded": len(folded),
                "tool_calls": [
                    {
                        "function": m.content["function"],
                        "arguments": json.dumps(m.content["arguments"]),
                        "output_chars": len(results[m.content["action_response_id"]].text),
                    }
                    for m in calls[:50]
                ],
                "tool_calls_total": len(calls),
                "summary_source": "host",
                "cap": 100_000,
                "input_scale": 1.3,
            }
        )
        self.cached = 0  # the view changed ahead of the tail: the next request misses the cache

    def read_call(self, small: bool = False) -> tuple[str, dict[str, Any], Any]:
        module = f"{self.rng.choice(_WORDS)}_{self.rng.choice(_WORDS)}"
        path = f"src/acme/{module}.py"
        code = self.python_file(module, functions=self.rng.randint(1, 2) if small else self.rng.randint(4, 9))
        return "reader", {"action": "open", "path": path}, {"success": True, "content": code}

    def search_call(self) -> tuple[str, dict[str, Any], Any]:
        term = f"{self.rng.choice(_VERBS)}_{self.rng.choice(_WORDS)}"
        matches = [
            f"src/acme/{self.rng.choice(_WORDS)}.py:{self.rng.randint(5, 400)}: "
            f"    value = {term}(options, strict={self.rng.choice(['True', 'False'])})"
            for _ in range(self.rng.randint(3, 12))
        ]
        return "search", {"query": term, "path": "src"}, {"matches": matches}

    def python_file(self, module: str, functions: int) -> str:
        rng = self.rng
        lines = [
            f'"""{module.replace("_", " ").capitalize()}: helpers for the acme settings package."""',
            "",
            "from __future__ import annotations",
            "",
            "import os",
            "from pathlib import Path",
            "",
            "from acme.errors import ConfigError",
            "",
            "",
        ]
        for _ in range(functions):
            verb, noun = rng.choice(_VERBS), rng.choice(_WORDS)
            lines += [
                f"def {verb}_{noun}(options: dict, home: Path | None = None) -> dict:",
                f'    """{verb.capitalize()} the {noun} from options, falling back to the home folder."""',
                "    home = home or Path(os.environ.get('ACME_HOME', '~/.acme')).expanduser()",
                "    result = {}",
            ]
            for _ in range(rng.randint(3, 10)):
                key = rng.choice(_WORDS)
                lines += [
                    f"    if '{key}' in options:",
                    f"        result['{key}'] = options['{key}']",
                    "    else:",
                    f"        result['{key}'] = home / '{key}.toml'",
                ]
            lines += ["    if not result:", f"        raise ConfigError('no {noun} in options')", "    return result", "", ""]
        return "\n".join(lines)

    def listing(self, size: int) -> dict[str, Any]:
        """`ls -laR` output of exactly `size` characters, the last line padded to fit."""
        rng, lines, total = self.rng, [], 0
        while True:
            name = f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}_{rng.randint(0, 999):03d}.py"
            line = f"-rw-r--r-- 1 dev dev {rng.randint(80, 90000):6d} Nov {rng.randint(1, 28):2d} 10:{rng.randint(0, 59):02d} {name}\n"
            if total + len(line) > size:
                break
            lines.append(line)
            total += len(line)
        text = "".join(lines)
        text += "#" * (size - len(text))  # a truncation filler line, so the length is exact
        return {"stdout": text, "exit_code": 0}

    def session(self) -> Session:
        record = FullRecord(self.messages)
        system_raw = message_dict(self.messages[0], self.branch_id)  # lionagi keeps a copy beside the record
        session = Session(
            record=record,
            view=self.view,
            format="lionagi",
            branch={
                "id": self.branch_id,
                "created_at": START,
                "metadata": {
                    "lion_class": "lionagi.session.branch.Branch",
                    "api_launch": {
                        "tools": "reader,search,bash",
                        "loop": "react",
                        "max_input_tokens": 100_000,
                        "context_fold_at": 0.8,
                        "context_fold_target": 0.6,
                    },
                },
                "user": None,
                "name": "demo",
                "system": system_raw,
            },
            model=MODEL,
        )
        manifest = {
            "branch_id": self.branch_id,
            "agent_name": "demo",
            "provider": "anthropic",
            "model": MODEL,
            "status": "completed",
            "started_at": START,
            "ended_at": round(self.clock, 6),
            "api_usage": self.usage,
            "context_folds": self.folds,
            "_note": "generated by core.demo: synthetic content, plausible sizes",
        }
        session.manifest = manifest
        session.trace = build_trace(record, manifest, session.warnings, self.view)
        return session


def _size(message: Message) -> int:
    return len(message.text) + 40  # the text plus the framing a compiled request adds around it


def write_demo(path: str | Path, **options: Any) -> Session:
    from foldscope.core.formats.lionagi import write_session

    session = generate(**options)
    write_session(session, path)
    return session


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m foldscope.core.formats.demo", description=__doc__)
    parser.add_argument("output", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args(argv)
    session = write_demo(args.output, seed=args.seed, rounds=args.rounds)
    print(f"wrote {args.output}: {len(session.record)} messages, {len(session.view)} in view")
    return 0


if __name__ == "__main__":
    sys.exit(main())
