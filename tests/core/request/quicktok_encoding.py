"""quicktok's encoding built once for the tests that count with it, skipped where it is not installed."""

from __future__ import annotations

import pytest

from foldscope.core.request import tokens

_built: list[tokens.FastEncoding] = []


def built_fast() -> tokens.FastEncoding:
    """quicktok's encoding (FastEncoding), built once for the whole run; skips the test where tiktoken counts."""
    if tokens.BACKEND != tokens.FAST:
        pytest.skip(f"counted by tiktoken here: {tokens.WHY_SLOW}")
    if not _built:
        _built.append(tokens.build_fast())
    return _built[0]
