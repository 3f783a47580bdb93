"""The o200k_base tokenizer, built from the vendored vocabulary with tiktoken's own hash check."""

from __future__ import annotations

import base64
import hashlib
import threading
from importlib import resources
from pathlib import Path

import tiktoken

# tiktoken's own expected SHA-256 for o200k_base.tiktoken (tiktoken_ext/openai_public.py).
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"

# The o200k_base pre-tokenizer pattern, as tiktoken_ext/openai_public.py defines it.
O200K_PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
O200K_SPECIAL = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}


class TokenizerError(Exception):
    """The vendored vocabulary is missing or does not match its expected hash."""


def vocabulary_path() -> Path:
    return Path(str(resources.files("resources").joinpath("o200k_base.tiktoken")))


def load_ranks(path: Path, expected_sha256: str = O200K_SHA256) -> dict[bytes, int]:
    """Parse a .tiktoken file after checking its SHA-256; never touches the network."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TokenizerError(f"{path}: cannot read the tokenizer vocabulary: {exc.strerror}") from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_sha256:
        raise TokenizerError(
            f"{path}: tokenizer vocabulary hash mismatch (expected {expected_sha256}, got {actual}); "
            "the file is corrupt or not o200k_base"
        )
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
        except ValueError:
            raise TokenizerError(f"{path}: line {number}: not a token and a rank") from None
    return ranks


def build_encoding(path: Path | None = None, expected_sha256: str = O200K_SHA256) -> tiktoken.Encoding:
    ranks = load_ranks(path or vocabulary_path(), expected_sha256)
    return tiktoken.Encoding(
        name="o200k_base",
        pat_str=O200K_PAT_STR,
        mergeable_ranks=ranks,
        special_tokens=O200K_SPECIAL,
    )


_encoding: tiktoken.Encoding | None = None
_lock = threading.Lock()


def encoding() -> tiktoken.Encoding:
    """The shared o200k_base encoding, built once from the vendored file."""
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                _encoding = build_encoding()
    return _encoding


def count_text(text: str) -> int:
    """Exact o200k_base token count of text, special-token strings counted as ordinary text."""
    return len(encoding().encode_ordinary(text))
