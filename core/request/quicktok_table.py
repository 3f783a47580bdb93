"""quicktok's tables of the vendored vocabulary, built from it (never from quicktok's own copy) and kept in the cache
folder, each checked against its expected hash."""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import Literal

from foldscope.core.request import unicode_gap
from foldscope.core.request.vocabulary import (
    O200K_SHA256,
    O200K_SPECIAL,
    TokenizerError,
    cache_folder,
    checked,
    load_ranks,
    vocabulary_path,
)

try:
    # The fastest exact o200k counter with wheels for our platforms (docs/performance.md, Counting): exact backtracking
    # BPE, linear in a piece's length where tiktoken's merge is quadratic. Built from our own vocabulary (fast_table).
    import quicktok  # type: ignore[import-untyped,import-not-found,unused-ignore]
except ImportError:  # no wheel for this platform (macOS on Intel, Python 3.14), or not installed
    quicktok = None

# quicktok's tables of our vocabulary, in its own binary format (fast_table): the token count, then per token in rank
# order its length (u16), bytes and rank (u32); the special tokens' count, then per token its rank (u32), length (u16)
# and text. Their SHA-256 as built from the vendored file (tests/core/request/test_tokens.py builds them again): a
# table in the cache that does not match is written anew, so a damaged or altered cache never counts.
FAST_TABLE_SHA256 = "6b17521f79788c7ace48fc75f6edde125637a90b0018427e68f28d051b2ac1fe"
FAST_SPECIAL_SHA256 = "95837e70aa1f68042293be2fb62ad5d748e7834940bf041299281ffa3addba3b"
_FAST_FILES = ("o200k.vocab", "o200k.special", "uniclass_o200k.bin")  # the last: Unicode classes (core.request.unicode_gap)


def quicktok_classes() -> bytes | None:
    """quicktok's own table of the pattern's Unicode classes, or None (core.request.unicode_gap)."""
    try:
        return (Path(quicktok.__file__).parent / "data" / "uniclass_o200k.bin").read_bytes()
    except OSError:
        return None


def fast_tables(ranks: dict[bytes, int], special: dict[str, int] = O200K_SPECIAL) -> tuple[bytes, bytes]:
    """quicktok's vocabulary and special-token tables of `ranks` and `special` (see FAST_TABLE_SHA256)."""
    pack = struct.pack
    vocab = [pack("<I", len(ranks))]
    vocab.extend(pack("<H", len(token)) + token + pack("<I", rank) for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]))
    specials = [pack("<I", len(special))]
    specials.extend(pack("<IH", rank, len(text.encode())) + text.encode() for text, rank in special.items())
    return b"".join(vocab), b"".join(specials)


def fast_table(path: Path | None = None, cache: Path | Literal[False] | None = None) -> Path:
    """A folder holding quicktok's tables of the vendored vocabulary, built from it (never from quicktok's own copy).

    The vendored file is read and its hash checked every time (as load_ranks does); the tables are kept in the cache
    folder under its SHA-256 and quicktok's version, and used only when each matches FAST_TABLE_SHA256 and
    FAST_SPECIAL_SHA256; anything else builds them again from the ranks. Where the cache cannot be written, they go to
    a temporary folder that lives as long as the process.
    """
    import hashlib

    path = path or vocabulary_path()
    sha256 = checked(path, O200K_SHA256)
    classes = unicode_gap.our_classes(quicktok_classes() or b"")
    if classes is None:
        raise TokenizerError(f"quicktok {quicktok.__version__}'s Unicode table is not the one checked against tiktoken's")
    folder = None
    if cache is not False:
        folder = (Path(cache) if cache else cache_folder()) / f"quicktok-{sha256[:16]}-{quicktok.__version__}"
        if _fast_table_holds(folder, classes):
            return folder
    vocab, special = fast_tables(load_ranks(path, O200K_SHA256, cache=cache))
    if hashlib.sha256(vocab).hexdigest() != FAST_TABLE_SHA256 or hashlib.sha256(special).hexdigest() != FAST_SPECIAL_SHA256:
        raise TokenizerError(f"{path}: quicktok's table of the vocabulary does not match its expected hash")
    for where in ([folder] if folder is not None else []) + [None]:
        try:
            if where is None:
                import atexit
                import shutil
                import tempfile

                where = Path(tempfile.mkdtemp(prefix="foldscope-quicktok-"))
                atexit.register(shutil.rmtree, where, True)
            from foldscope.core.model.folders import make_private_folder

            make_private_folder(where)
            for name, blob in zip(_FAST_FILES, (vocab, special, classes)):
                temporary = where / f".{name}.{os.getpid()}.tmp"
                temporary.write_bytes(blob)
                os.replace(temporary, where / name)
            return where
        except OSError:
            continue  # a read-only cache: the temporary folder instead
    raise TokenizerError("cannot write quicktok's table of the vocabulary anywhere")


def _fast_table_holds(folder: Path, classes: bytes) -> bool:
    import hashlib

    try:
        vocab, special, theirs = (folder / name for name in _FAST_FILES)
        return (
            hashlib.sha256(vocab.read_bytes()).hexdigest() == FAST_TABLE_SHA256
            and hashlib.sha256(special.read_bytes()).hexdigest() == FAST_SPECIAL_SHA256
            and theirs.read_bytes() == classes
        )
    except OSError:
        return False
