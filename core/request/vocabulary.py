"""The o200k_base vocabulary, vendored: its pattern and special tokens, its ranks read with tiktoken's own hash check
(never downloaded) and kept parsed in the cache folder, and tiktoken's Encoding of it."""

from __future__ import annotations

import binascii
import contextlib
import marshal
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
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
# The tokenizer's identity, kept with every token count the library stores (a count by another vocabulary
# is not this one's): the encoding and the SHA-256 of its vocabulary file.
TOKENIZER_ID = f"o200k_base sha256:{O200K_SHA256[:16]}"


class TokenizerError(Exception):
    """The vendored vocabulary is missing or does not match its expected hash."""


def tiktoken_version() -> str:
    """The installed tiktoken's __version__ ("none" without it), read from its __init__.py where it stands there as
    a literal: importing tiktoken costs 40-50 ms of a command that never counts with it (core.store.snapshot_inputs)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("tiktoken")
    except (ImportError, ValueError):
        return "none"
    if spec is None:
        return "none"
    try:
        text = Path(spec.origin or "").read_text(encoding="utf-8")
    except OSError:
        text = ""
    found = [line.split("=", 1)[1].strip().strip("\"'") for line in text.splitlines() if line.startswith("__version__ = ")]
    if len(found) == 1:
        return found[0]
    import tiktoken

    return getattr(tiktoken, "__version__", "?")


def vocabulary_path() -> Path:
    beside = Path(__file__).resolve().parents[2] / "resources" / "o200k_base.tiktoken"  # the package's own folder
    if beside.is_file():
        return beside  # importlib.resources costs 9 ms of start-up (zipfile, tempfile) for the same path
    from importlib import resources

    return Path(str(resources.files("foldscope.resources").joinpath("o200k_base.tiktoken")))


def cache_folder() -> Path:
    """Where parsed vocabularies are kept: FOLDSCOPE_CACHE, else the platform's user cache folder (~/.cache/foldscope on Linux)."""
    from foldscope.core.model.folders import cache_folder as user_cache_folder

    return user_cache_folder()


def load_ranks(path: Path, expected_sha256: str = O200K_SHA256, cache: Path | Literal[False] | None = None) -> dict[bytes, int]:
    """The ranks of a .tiktoken file, after checking its SHA-256; never touches the network.

    The file is read and hashed every time. Parsing it costs about 0.1 s, so the parsed ranks are
    kept in the cache folder (`cache`, default cache_folder(); False for none) under the file's
    SHA-256, in marshal form (data only, never code) behind their own SHA-256, and used only when
    that digest verifies and the token count matches the file's line count; anything else reparses.
    """
    data, actual = _read_checked(path, expected_sha256)
    lines = data.count(b"\n") + (not data.endswith(b"\n") and bool(data))
    cached = None
    if cache is not False:
        cached = _cache_file(Path(cache) if cache else cache_folder(), actual)
        ranks = _read_cache(cached, lines)
        if ranks is not None:
            return ranks
    ranks = parse_ranks(data, path)
    if cached is not None:
        _write_cache(cached, ranks)
    return ranks


def _read_checked(path: Path, expected_sha256: str) -> tuple[bytes, str]:
    """The file's bytes and SHA-256, once the hash matches (else TokenizerError, naming the file)."""
    import hashlib  # here, not at import: hashlib loads OpenSSL (3 ms of every start-up)

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TokenizerError(f"{path}: cannot read the tokenizer vocabulary: {exc.strerror}") from None
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_sha256:
        raise TokenizerError(
            f"{path}: tokenizer vocabulary hash mismatch (expected {expected_sha256}, got {actual}); the file is corrupt or not o200k_base"
        )
    return data, actual


def checked(path: Path, expected_sha256: str) -> str:
    """The file's SHA-256 once it matches (else TokenizerError): hashed as read, never held whole."""
    import hashlib

    try:
        with open(path, "rb") as handle:
            actual = hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return _read_checked(path, expected_sha256)[1]  # its error, in its words
    if actual != expected_sha256:
        return _read_checked(path, expected_sha256)[1]
    return actual


def parse_ranks(data: bytes, path: Path) -> dict[bytes, int]:
    """Parse `base64-token rank` lines (twice as fast as a line-by-line loop: one split, C-level decoding)."""
    parts = data.split()
    if len(parts) % 2:
        raise TokenizerError(f"{path}: not a list of tokens and ranks (an odd number of fields)")
    try:
        return dict(zip(map(binascii.a2b_base64, parts[0::2]), map(int, parts[1::2])))
    except (ValueError, binascii.Error) as exc:
        raise TokenizerError(f"{path}: not a list of tokens and ranks ({exc})") from None


def _cache_file(folder: Path, sha256: str) -> Path:
    # marshal's format belongs to one Python version, so the version is part of the name.
    return folder / f"ranks-{sha256}-py{sys.version_info[0]}{sys.version_info[1]}-m{marshal.version}.bin"


def _read_cache(path: Path, lines: int) -> dict[bytes, int] | None:
    import hashlib

    try:
        blob = path.read_bytes()
    except OSError:
        return None
    digest, payload = blob[:64], blob[65:]
    if blob[64:65] != b"\n" or hashlib.sha256(payload).hexdigest().encode() != digest:
        return None
    try:
        ranks = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    if not isinstance(ranks, dict) or len(ranks) != lines:
        return None
    return ranks


def _write_cache(path: Path, ranks: dict[bytes, int]) -> None:
    import hashlib

    payload = marshal.dumps(ranks)
    blob = hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        from foldscope.core.model.folders import make_private_folder

        make_private_folder(path.parent)
        temporary.write_bytes(blob)
        os.replace(temporary, path)
    except OSError:  # a read-only cache only costs the next start its parse
        with contextlib.suppress(OSError):  # a cache folder under a file: no temporary to remove, NotADirectoryError
            temporary.unlink()


def build_encoding(path: Path | None = None, expected_sha256: str = O200K_SHA256) -> tiktoken.Encoding:
    """tiktoken's Encoding of the vendored vocabulary (the reference; the whole path where quicktok is missing)."""
    import tiktoken  # only where it counts or is asked for: quicktok's path never imports it

    ranks = load_ranks(path or vocabulary_path(), expected_sha256)
    return tiktoken.Encoding(
        name="o200k_base",
        pat_str=O200K_PAT_STR,
        mergeable_ranks=ranks,
        special_tokens=O200K_SPECIAL,
    )
