"""The unseen head before a session's first report: what each agent sends that its file does not hold.

A Claude Code, Codex or pi file lacks the system prompt and tool definitions the agent sent, so the first
request's count alone falls short of its reported input by that head (54% to 100% of it on real files). Until the
session's own first report measures it, the prediction adds the head this agent (and model, where known) was
measured to send on other sessions: `resources/unseen_heads.json`, written by `bench/bench_accuracy.py --heads`
from the dev corpus (the median, per agent and per model, of each session's first reported input less its count),
its source named in the file. A prediction that adds it is flagged as estimated; nothing here reads the session's
own reports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from foldscope.core.model.pricing import is_model, normalise
from foldscope.resources import read_text


@dataclass(frozen=True)
class HeadPrior:
    """A head estimate for a session's first requests, and where it comes from (shown beside the prediction)."""

    tokens: int
    source: str


@cache
def table() -> dict[str, Any]:
    text = read_text("unseen_heads.json")
    data = json.loads(text)
    return data if isinstance(data, dict) else {}


def head_prior(fmt: str | None, model: str | None) -> HeadPrior | None:
    """The head this agent's first requests carry before any report: its model's, else the agent's; None when the
    table has neither (a format whose file holds its head, or an agent never measured)."""
    agents = table().get("agents", {})
    agent = agents.get(fmt or "") if isinstance(agents, dict) else None
    if not isinstance(agent, dict):
        return None
    source = str(table().get("source", "resources/unseen_heads.json"))
    models = agent.get("models", {})
    if is_model(model) and isinstance(models, dict):
        name = normalise(model or "")
        found = models.get(name)
        if isinstance(found, dict) and isinstance(found.get("tokens"), int):
            return HeadPrior(found["tokens"], f"{fmt} {name}: {source}")
    tokens = agent.get("tokens")
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0:
        return HeadPrior(tokens, f"{fmt}: {source}")
    return None
