"""Which provider a model name belongs to, by its name alone (no imports: readers and the status line ask it)."""

from __future__ import annotations

OPENAI_PREFIXES = ("gpt-", "o1", "o3", "o4", "codex", "chatgpt")


def is_openai_model(name: str | None) -> bool:
    """Whether a model is OpenAI's (a gpt-, o-series, codex or chatgpt model, with or without a provider prefix such as
    "openai/"): it caches by itself, without marks, and its images are counted in tiles."""
    return name is not None and name.rsplit("/", 1)[-1].lower().startswith(OPENAI_PREFIXES)
