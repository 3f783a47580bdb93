"""The count a prediction is made from (core.request.provider_text.PredictionCounter), one view at a time."""

from __future__ import annotations

from foldscope.core.model.session import Message
from foldscope.core.request import provider_text
from foldscope.core.request.provider_text import PredictionCounter


def test_how_a_model_is_counted_is_asked_once_a_model_not_once_a_request(monkeypatch):
    messages = [Message(f"m{k}", "instruction" if k % 2 == 0 else "assistant", k, {"instruction": f"ask {k}"}) for k in range(8)]
    models = ("claude-sonnet-4-5", "gpt-5")  # the compiled count and thinking; the provider's text
    views = [(messages[: k + 1], 10 * k, model) for k in range(8) for model in models]
    each_fresh = [PredictionCounter("claude_code").count(*view).total for view in views]
    asked: list[str | None] = []
    real = provider_text.reads_text

    def reads_text(model, fmt):
        asked.append(model)
        return real(model, fmt)

    monkeypatch.setattr(provider_text, "reads_text", reads_text)
    counter = PredictionCounter("claude_code")
    assert [counter.count(*view).total for view in views] == each_fresh
    assert asked == list(models)
