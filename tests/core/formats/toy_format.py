"""A throwaway format for the reader contract's test: one module declaring its SPEC, nothing else in the project.

A toy JSON-lines file: a header `{"toy": "session", "cwd": ...}`, then one line per message, `{"role": "user",
"text": ...}` or `{"role": "assistant", "text": ..., "model": ..., "usage": {"input": N, "output": N}}`. Its
agent keeps sessions in `$TOY_HOME/sessions/<project>/*.jsonl` (default ~/.toy).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from foldscope.core.formats.spec import FormatSpec, Sessions, no_compaction, project_files
from foldscope.core.formats.stream import SessionBuilder, feed_all, iter_json_lines
from foldscope.core.model.session import Session, Usage

FORMAT = "toy"


def sniff(head: bytes, path: Path) -> bool:
    first = head.split(b"\n", 1)[0]
    try:
        value = json.loads(first)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("toy") == "session"


def read(path: Path) -> Session:
    builder = SessionBuilder(Path(path), FORMAT)

    def feed(line: int, offset: int, value: Any) -> None:
        if value.get("toy") == "session":
            builder.extras["cwd"] = value.get("cwd")
        elif value.get("role") == "user":
            builder.add(f"u{line}", "instruction", {"instruction": value["text"]}, line, at=value.get("at"))
        elif value.get("role") == "assistant":
            builder.open_request(value.get("at"), value.get("model"))
            mid = builder.add(f"a{line}", "assistant", {"assistant_response": value["text"]}, line, at=value.get("at"))
            builder.answer(mid)
            builder.report_usage(Usage(input=value["usage"]["input"], output=value["usage"]["output"]))
            builder.close_request()

    feed_all(iter_json_lines(Path(path), builder), feed, builder)
    return builder.build()


SPEC = FormatSpec(
    name=FORMAT,
    title="Toy",
    sniff=sniff,
    read=read,
    trace_later=False,
    samples=None,
    unseen_head=False,
    provider_text=False,
    follow=None,
    first_part=False,
    sessions=Sessions(env="TOY_HOME", default=".toy", folder="sessions", files=lambda root: project_files(root)),
    window=lambda model: (100_000, "Toy's documented window"),
    compaction=no_compaction,
    no_summary=None,
    cache="none",
    usage_precision="exact",
    no_requests=None,
)
