"""A model's provider by its name: one rule for caching, the cache check and the readers' image counts."""

from __future__ import annotations

import pytest

from foldscope.core.model.providers import is_openai_model


@pytest.mark.parametrize(
    "name", ["gpt-4o", "GPT-5", "openai/gpt-4.1", "o1-preview", "o3", "o4-mini", "codex-mini-latest", "chatgpt-4o-latest"]
)
def test_openai_models_are_named_by_their_prefix_with_or_without_a_provider(name):
    assert is_openai_model(name)


@pytest.mark.parametrize(
    "name", [None, "", "claude-opus-4-1", "anthropic/claude-sonnet-4", "gemini-2.5-pro", "gpt4all-local", "qwen3-coder"]
)
def test_other_models_and_no_model_are_not_openai(name):
    assert not is_openai_model(name)
