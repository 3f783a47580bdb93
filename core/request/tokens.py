"""The o200k_base tokenizer, built from the vendored vocabulary with tiktoken's own hash check: counted by quicktok
where its wheel is installed, else by tiktoken (the same counts; BACKEND says which, chosen at import)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foldscope.core.request import long_pieces, small_count, unicode_gap
from foldscope.core.request.quicktok_table import fast_table, quicktok, quicktok_classes
from foldscope.core.request.vocabulary import O200K_PAT_STR, TokenizerError, build_encoding

if TYPE_CHECKING:
    import tiktoken


FAST, SLOW = "quicktok", "tiktoken"


def _why_not_fast() -> str:
    if quicktok is None:
        return "quicktok is not installed (no wheel for this platform?)"
    if os.environ.get("FOLDSCOPE_TOKENIZER", "").lower() == SLOW:
        return "FOLDSCOPE_TOKENIZER=tiktoken"
    classes = quicktok_classes()
    # The known table by its hash only: making ours from it costs 20 ms of every process's start-up, and fast_table
    # makes (and checks) it where the encoder is built.
    if classes is None or not unicode_gap.known_table(classes):
        return f"quicktok {quicktok.__version__}'s Unicode table is not the one checked against tiktoken's"
    return ""


# Chosen once, here: every count of a process is by one counter, and both give tiktoken's counts (tests prove it).
# FOLDSCOPE_TOKENIZER=tiktoken counts with tiktoken even where quicktok is installed (to compare, or to rule it out).
WHY_SLOW = _why_not_fast()
BACKEND = SLOW if WHY_SLOW else FAST
# Said to the logging a program set up before counting (importing logging costs `foldscope count` 5 ms of start-up, and
# where nothing imported it nothing was set up to hear the line).
if "logging" in sys.modules:
    sys.modules["logging"].getLogger(__name__).info(
        "o200k_base counted by %s", f"quicktok {quicktok.__version__}" if BACKEND == FAST else f"tiktoken: {WHY_SLOW}"
    )


def by_passages() -> bool:
    """Whether long texts are counted by passages (core.request.passages): only with tiktoken. quicktok tokenises a
    text in about the time cutting it into passages and looking them up takes, so it counts every text whole."""
    return BACKEND == SLOW


def windowed() -> bool:
    """Whether a text holding a very long piece is merged in tiktoken's windows (core.request.long_pieces): only with
    tiktoken, whose merge is quadratic in a piece's length. quicktok's is linear but holds per-byte state for the whole
    piece, so FastEncoding.count merges such a piece in its own windows (long_pieces.count_fast)."""
    return BACKEND == SLOW


def build_fast(path: Path | None = None) -> FastEncoding:
    """quicktok's o200k_base, built from the vendored vocabulary's tables (fast_table)."""
    folder = fast_table(path)
    try:
        return FastEncoding(quicktok.Tokenizer("o200k_base", str(folder)))
    except RuntimeError as exc:  # quicktok's word for a table it cannot read
        raise TokenizerError(f"{folder}: quicktok cannot load the vocabulary's table: {exc}") from None


def _without_surrogates(text: str) -> str:
    # tiktoken's own repair (tiktoken/core.py) for a text UTF-8 cannot hold: each lone surrogate becomes U+FFFD.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class FastEncoding:
    """o200k_base counted by quicktok: encode_ordinary gives tiktoken's ids, count their number (no list made);
    anything else is tiktoken's own Encoding's (built on first use: the windows of core.request.long_pieces, tests)."""

    name = "o200k_base"
    _pat_str = O200K_PAT_STR  # as tiktoken's Encoding names it (core.request.long_pieces splits by it)

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer

    def encode_ordinary(self, text: str) -> list[int]:
        try:
            return self._tokenizer.encode_ordinary(text)
        except (UnicodeEncodeError, TypeError):  # pybind11's word for a str UTF-8 cannot hold
            if not isinstance(text, str):
                raise
            return self._tokenizer.encode_ordinary(_without_surrogates(text))

    def count(self, text: str) -> int:
        if long_pieces.has_long_piece(text):  # its long pieces merged in windows: quicktok's state stays a few kB
            return long_pieces.count_fast(self, text)
        if len(text) > 2 * long_pieces.TEXT_PART:  # in parts cut between pieces: quicktok's state is a part's
            return long_pieces.count_parts(self.count_whole, text)
        return self.count_whole(text)

    def count_whole(self, text: str | bytes) -> int:
        """len(encode_ordinary(text)) in one call of quicktok's (per-byte state for the longest piece); text or its UTF-8."""
        try:
            # A str that is not ASCII keeps the UTF-8 made of it for quicktok (3 bytes a CJK character, as long as the
            # str lives: a counting child's parts of a 50 MB message, 50 MB more); encoded here, it is freed after.
            return self._tokenizer.count(text if isinstance(text, bytes) or text.isascii() else text.encode())
        except (UnicodeEncodeError, TypeError):  # pybind11's word for a str UTF-8 cannot hold
            if not isinstance(text, str):
                raise
            return self._tokenizer.count(_without_surrogates(text))

    def encode_ordinary_batch(self, texts: list[str], *, num_threads: int = 8) -> list[list[int]]:
        return [self.encode_ordinary(text) for text in texts]

    def count_batch(self, texts: list[str]) -> list[int]:
        """Each text's count: texts too short to hold a long piece go to quicktok straight (count's own tests, made
        once for them all: a cold count of a view brings a thousand bodies, docs/performance.md)."""
        if texts and max(map(len, texts)) < long_pieces.LONG_PIECE:
            try:
                return list(map(self._tokenizer.count, texts))
            except (UnicodeEncodeError, TypeError):  # a lone surrogate in one of them: each text its own way
                pass
        count = self.count
        return [count(text) for text in texts]

    def decode(self, ids: list[int], errors: str = "replace") -> str:
        return self._tokenizer.decode(ids, errors)

    def __getattr__(self, name: str) -> Any:
        return getattr(reference_encoding(), name)


_encoding: Any = None  # FastEncoding or tiktoken.Encoding, by BACKEND
_reference: tiktoken.Encoding | None = None
_lock = threading.Lock()
_helper: Any = None  # the forked helper encoding for this process (core.request.counting.helper), set there


def encoder_built() -> bool:
    """Whether this process has built its own o200k encoder (quicktok's is 64 MiB)."""
    return _encoding is not None


def encoding() -> Any:
    """The shared o200k_base encoding (FastEncoding, or tiktoken's Encoding where quicktok is missing), built once
    from the vendored file (or the helper's, core.request.counting.helper). Every one encodes as tiktoken's Encoding would."""
    if _helper is not None:
        return _helper  # encodes as the Encoding would
    return _local()


def local_encoding() -> Any:
    """The encoding built in this process (never the helper's pipe)."""
    return _local()


def reference_encoding() -> tiktoken.Encoding:
    """tiktoken's own Encoding of the vendored vocabulary, built in this process (for the windows of long pieces)."""
    global _reference
    if _reference is None:
        local = _encoding if BACKEND == SLOW else None
        with _lock:
            if _reference is None:
                _reference = local if local is not None and not isinstance(local, FastEncoding) else build_encoding()
    return _reference


def _local() -> Any:
    global _encoding
    if _encoding is None:
        with _lock:
            if _encoding is None:
                _encoding = _build()
    return _encoding


def _build() -> Any:
    """The encoding BACKEND names, built from the vendored vocabulary."""
    if small_count.spent():  # said, so a slow start reads as what it is: the small path's budget ran out
        _say("o200k_base encoder built after %d characters counted without one", small_count.spent())
    return build_fast() if BACKEND == FAST else build_encoding()


def counter() -> Callable[[str], int]:
    """A function giving a text's count, len(encode_ordinary(text)): core.request.small_count's while no encoding is
    built and its budget lasts (a small input, expect), else the encoding's in use (encoding())."""
    if _encoding is None and _helper is None and small_count.open_for():
        return _small_first
    return _built_counter()


def _small_first(text: str) -> int:
    """text's count by core.request.small_count, else by the encoding (built then, if need be)."""
    if _encoding is None and _helper is None:
        n = small_count.count(text)
        if n is not None:
            return n
    return _built_counter()(text)


def _built_counter() -> Callable[[str], int]:
    enc = encoding()
    if hasattr(type(enc), "count"):  # FastEncoding's and the helper's: no list of ids made
        return enc.count
    encode = enc.encode_ordinary
    return lambda text: len(encode(text))


def helping() -> bool:
    """Whether a helper encodes for this process (core.request.counting.helper.start_helper)."""
    return _helper is not None


def forget_helper() -> None:
    """In a process forked from one with a helper (core.replay.parallel): let go of the helper without stopping it.
    Its pipes are the parent's, and two processes asking on one pipe would read each other's answers; this one
    builds its own encoding when it first encodes."""
    global _helper
    _helper = None


# At most this many characters are encoded in one batch call: the ids of a batch are alive together
# (about 36 bytes a token as Python ints), so a whole file's text in one call would cost about ten
# times the file in memory; a megabyte of text is enough for tiktoken's threads to share the work.
BATCH_CHARS = 1 << 20


def count_ordinary_batch(texts: list[str], num_threads: int = 8) -> list[int]:
    """Each text's o200k_base token count, len(encode_ordinary(text)), counted in batches: by the helper
    when one runs (only the counts come back through its pipe), else by tiktoken's threads over
    batches of at most BATCH_CHARS characters, so that only one batch's ids are ever held."""
    if _encoding is None and _helper is None and small_count.open_for():
        return [_small_first(text) for text in texts]  # a small input's (expect): no encoder built for it
    counts: list[int] = []
    for batch in _batches(texts, BATCH_CHARS):
        helper = _helper
        answer = helper.count_ordinary_batch(batch) if helper is not None else None
        if answer is None:
            local = _local()
            answer = (
                local.count_batch(batch)
                if isinstance(local, FastEncoding)
                else [len(ids) for ids in local.encode_ordinary_batch(batch, num_threads=num_threads)]
            )
        counts.extend(answer)
    return counts


def _batches(texts: list[str], chars: int) -> list[list[str]]:
    """texts in order, cut into consecutive runs of at most `chars` characters (a longer text alone)."""
    runs: list[list[str]] = []
    run: list[str] = []
    size = 0
    for text in texts:
        if run and size + len(text) > chars:
            runs.append(run)
            run, size = [], 0
        run.append(text)
        size += len(text)
    if run:
        runs.append(run)
    return runs


def count_short(text: str) -> int:
    """A short text's count (the glue between blocks): core.request.small_count's before an encoding is built, else
    the encoding's ids (the helper's one request each, as before small counts)."""
    if _encoding is None and _helper is None:
        n = small_count.count(text)
        if n is not None:
            return n
    return len(encoding().encode_ordinary(text))


def count_text(text: str) -> int:
    """Exact o200k_base token count of text, special-token strings counted as ordinary text (a very long piece merged
    in windows, by tiktoken or by quicktok, core.request.long_pieces)."""
    if _encoding is None and _helper is None:
        n = small_count.count(text)  # before any encoder is built, within its budget: no build (core.request.small_count)
        if n is not None:
            return n
    if windowed() and long_pieces.has_long_piece(text):
        return long_pieces.count_ordinary(reference_encoding(), text)  # merged here: the windows need the Encoding itself
    progress = long_pieces.this_threads_progress()
    if progress is None or _helper is None or not long_pieces.has_long_piece(text):
        return counter()(text)  # quicktok's windows here report to this thread's progress between them (count_fast)
    # The helper merges it in its windows, out of reach of this thread's progress: its start and end are reported, so a
    # reader sees what is counted and a cancelled task stops before it.
    progress(0, len(text))
    n = counter()(text)
    progress(len(text), len(text))
    return n


# A file up to this size is counted by core.request.small_count (expect) rather than by an encoder built for it: its
# text (about half of a Claude Code file's bytes, less of others') costs less there than an encoder's build
# (docs/performance.md, "Start-up: the counter chosen by the work").
SMALL_INPUT_BYTES = 1 << 20
SMALL_INPUT_CHARS = 1 << 20  # what such files may count there in all, in one process: about one build's CPU


def small_input(size: int) -> bool:
    """Whether an input of `size` bytes is counted without building an encoder (expect)."""
    return size <= SMALL_INPUT_BYTES


def expect(path: str | os.PathLike) -> bool:
    """The file at `path` is about to be counted: when it is small, this process counts up to SMALL_INPUT_CHARS with
    core.request.small_count before building an encoder. True when it is small."""
    try:
        small = small_input(os.path.getsize(path))
    except OSError:
        return False  # the read says what is wrong with the file
    if small and small_count.BUDGET_CHARS < SMALL_INPUT_CHARS:
        small_count.allow(SMALL_INPUT_CHARS)
        _say("small input: counted without building an encoder, up to %d characters", SMALL_INPUT_CHARS)
    return small


def _say(message: str, *args: Any) -> None:
    if "logging" in sys.modules:  # a program that set logging up imported it: see BACKEND's line
        sys.modules["logging"].getLogger(__name__).info(message, *args)
