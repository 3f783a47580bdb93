"""For tests that a child counting ahead counted some texts: it is started at once and waited for, and what this process counts is seen."""

from __future__ import annotations


def counted_here_with_a_child(monkeypatch) -> list[str]:
    """A child counting ahead from the first character, waited for however loaded the machine (never counted for while it
    starts); gives the list of texts this process then counts itself (core.request.tokens.count_text), filled as it goes."""
    from foldscope.core.request import tokens
    from foldscope.core.request.counting import ahead, backend

    monkeypatch.delenv("FOLDSCOPE_COUNTING", raising=False)
    monkeypatch.setattr(backend, "free_core", lambda: True)
    monkeypatch.setattr(ahead, "START_CHARS", 0)
    monkeypatch.setattr(ahead, "WAIT_FOR_START", True)
    monkeypatch.setattr(ahead, "COUNT_WHILE_WAITING", False)
    monkeypatch.setattr(ahead, "START_SECONDS", 120.0)
    counted_here: list[str] = []
    real = tokens.count_text
    monkeypatch.setattr(tokens, "count_text", lambda text: counted_here.append(text) or real(text))
    return counted_here
