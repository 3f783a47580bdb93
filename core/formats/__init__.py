"""The reader registry: detect a session file's format by its content and load it into a Session."""

from __future__ import annotations

import os
import stat
import sys
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from foldscope.core.formats import fast_json, first_line, registry
from foldscope.core.formats.spec import FormatSpec
from foldscope.core.formats.stream import json_problem
from foldscope.core.model.session import PENDING_TRACE, ReadError, Session

# How much of a file sniff() sees: enough for the first line of any JSONL format and for the
# opening keys of a Branch dump.
SNIFF_BYTES = 64 * 1024

# Errors a reader might let slip on input it did not expect; load_session turns them into one
# clear line instead of a traceback (DESIGN.md, Reliability).
_UNEXPECTED = (ValueError, TypeError, KeyError, IndexError, AttributeError, UnicodeError, RecursionError)


def formats() -> list[str]:
    """The format names load_session accepts for `format=` (core.formats.registry declares them)."""
    return [spec.name for spec in registry.FORMATS]


def _reader_for(format_name: str, file: str) -> FormatSpec:
    spec = registry.format_named(format_name)
    if spec is not None:
        return spec
    raise ReadError(file, "", f"unknown format {format_name!r} (known: {', '.join(formats())})")


def read_head(path: Path, size: int = SNIFF_BYTES) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError as exc:
        raise ReadError(str(path), "", f"cannot read the file: {exc.strerror or exc}") from None


def read_first_line(path: Path) -> bytes:
    """The file's bytes through the end of its first line (and what came with it), at most first_line.LINE_MAX."""
    chunks: list[bytes] = []
    try:
        with open(path, "rb") as handle:
            read = 0
            while read < first_line.LINE_MAX:
                chunk = handle.read(1 << 20)
                chunks.append(chunk)
                read += len(chunk)
                if not chunk or b"\n" in chunk:
                    break
    except OSError as exc:
        raise ReadError(str(path), "", f"cannot read the file: {exc.strerror or exc}") from None
    return b"".join(chunks)


def _claimed(head: bytes, path: Path) -> str | None:
    """The name of the first reader whose sniff claims a file with this head, else None."""
    for spec in registry.FORMATS:
        try:
            claimed = spec.sniff(head, path)
        except (ValueError, TypeError, RecursionError, OSError):
            claimed = False  # a head no sniff expected claims nothing; the refusal below names the problem
        if claimed:
            return spec.name
    return None


def check_file(path: Path) -> None:
    """Refuse, in one line, what is not a regular file one can read: a folder, a FIFO or device (whose
    open() would wait forever for a writer), a path in a folder one cannot enter."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise ReadError(str(path), "", f"cannot read the file: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        if folder_format(path) is None:
            raise ReadError(str(path), "", "is a folder, not a session file")
        return  # a folder a format keeps one session in (a Cline task)
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
        raise ReadError(str(path), "", f"is {kind}, not a regular file: foldscope reads session files only")


def folder_format(path: Path) -> str | None:
    """The format that keeps one session in this folder (its sniff, shown no bytes, claims the folder), or None."""
    for spec in registry.FORMATS:
        try:
            if spec.sniff(b"", path):
                return spec.name
        except (ValueError, TypeError, RecursionError, OSError):
            continue
    return None


def detect_format(path: str | Path) -> str:
    """The name of the first reader whose sniff claims the file; ReadError when none does."""
    path = Path(path)
    check_file(path)
    if path.is_dir():
        return folder_format(path) or ""  # check_file let the folder through: a format claims it
    head = read_head(path)
    if not head.strip():
        raise ReadError(str(path), "", "the file is empty")
    claimed = _claimed(head, path)
    if claimed is None and len(head) == SNIFF_BYTES and b"\n" not in head and head.lstrip(b"\xef\xbb\xbf \t\r").startswith(b"{"):
        # A first line longer than the sniff window (a JSON lines file opening on a long prompt) holds no whole
        # line to sniff: its skeleton is sniffed (first_line: the long strings cut short, so no sniff builds a huge
        # prompt); a line msgspec refuses, or no reader claims so, is read whole, once, for the refusal to name it.
        # A head that opens no JSON object (an archive, an image, a text) is named from the head alone.
        skeleton = first_line.sniff_head(path, SNIFF_BYTES)
        claimed = _claimed(skeleton, path) if skeleton is not None else None
        if claimed is None:
            head = read_first_line(path)
            claimed = _claimed(head, path)
    if claimed is not None:
        return claimed
    looks = looks_like(head)
    if looks is not None:
        raise ReadError(str(path), "", f"{looks}, not a session file")
    _refuse_unreadable_json(path, head)
    raise ReadError(str(path), "", f"not a session file foldscope can read (formats: {', '.join(formats())})")


# The first bytes of files a user may pass by mistake, and what to call them (checked only after no reader claims
# the file: an Inspect AI .eval log is a zip archive its reader claims first).
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"%PDF-", "a PDF document"),
    (b"PK\x03\x04", "a zip archive"),
    (b"\x1f\x8b", "a gzip-compressed file"),
    (b"BZh", "a bzip2-compressed file"),
    (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"(\xb5/\xfd", "a zstd-compressed file"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive"),
    (b"SQLite format 3\x00", "an SQLite database (a foldscope library is opened with --db)"),
    (b"\x7fELF", "a program (ELF executable)"),
    (b"MZ", "a Windows program"),
    (b"\xca\xfe\xba\xbe", "a Mach-O program"),
    (b"\xcf\xfa\xed\xfe", "a Mach-O program"),
    (b"OggS", "an Ogg audio or video file"),
    (b"fLaC", "a FLAC audio file"),
    (b"ID3", "an MP3 audio file"),
    (b"\x00\x00\x01\x00", "an icon image"),
    (b"BM", "a BMP image"),
    (b"PAR1", "a Parquet file"),
    (b"\xd0\xcf\x11\xe0", "an old Microsoft Office document"),
)


def looks_like(head: bytes) -> str | None:
    """What a file that is no session looks like by its first bytes ("a PNG image"), None when it is not a known
    binary format."""
    binary = b"\x00" in head[:512] or not _utf8(head[:512])
    for magic, name in _MAGIC:
        # a short signature names the file only when it is not text ("BM..." may begin a note)
        if head.startswith(magic) and (len(magic) >= 4 or binary):
            return name
    if head[:4] == b"RIFF" and head[8:12] in (b"WEBP", b"WAVE", b"AVI "):
        return {b"WEBP": "a WebP image", b"WAVE": "a WAV audio file", b"AVI ": "an AVI video"}[head[8:12]]
    if head[4:8] == b"ftyp":
        return "an MP4 or QuickTime video (or HEIC image)"
    if head[257:262] == b"ustar":
        return "a tar archive"
    return None


def _utf8(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 4  # a character cut by the window is still text
    return True


def _refuse_unreadable_json(path: Path, head: bytes) -> None:
    """A file that looks like one JSON document but does not parse: say where it breaks."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not a multi-byte character cut by the sniff window
            raise ReadError(str(path), f"byte {exc.start}", "not UTF-8 text") from None
    lines = head.split(b"\n", 2)
    try:
        broken_first = len(lines) == 3 and not _parses(lines[0]) and _parses(lines[1])
    except RecursionError:  # a whole first line read past the sniff window may nest deeper than json parses
        raise ReadError(str(path), "line 1", fast_json.TOO_DEEP) from None
    if broken_first:
        # JSON lines whose first line is broken: say so, rather than "not a session file".
        raise ReadError(str(path), "line 1", "not JSON (the lines after it are)")
    if not head.lstrip().startswith((b"{", b"[")) or path.stat().st_size > 64 * SNIFF_BYTES:
        return
    import json

    try:
        json.loads(path.read_bytes())
    except RecursionError:
        raise ReadError(str(path), "", fast_json.TOO_DEEP) from None
    except UnicodeDecodeError as exc:
        raise ReadError(str(path), f"byte {exc.start}", "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        # A JSONL file's first line parses alone; only a single broken document lands here.
        if b"\n" in head.strip() and _parses(head.split(b"\n", 1)[0]):
            return
        raise ReadError(str(path), f"line {exc.lineno} column {exc.colno}", json_problem(exc)) from None


def _parses(line: bytes) -> bool:
    import json

    try:
        json.loads(line)
        return True
    except ValueError:
        return False


def load_session(path: str | Path, format: str | None = None, sample: str | None = None, *, trace_later: bool = False) -> Session:
    """Read a session file into a Session, all or nothing; bad input raises ReadError.

    `sample` names one sample of an Inspect AI log (ID or ID:EPOCH); other formats hold one session. With
    `trace_later`, a reader that builds its trace apart from the record (a Branch's, core.formats.lionagi) leaves it
    for finish_trace, so the record can be shown first; every other reader reads as before.
    """
    path = Path(path)
    check_file(path)
    name = format or detect_format(path)
    reader = _reader_for(name, str(path))
    if sample is not None and reader.samples is None:
        raise ReadError(
            str(path),
            "",
            f"--sample (or --session) names one of the sessions a file holds (an Inspect AI "
            f"log's samples, an OpenCode database's sessions, an Aider history's runs); this file is {name}, which holds one",
        )
    with _reading(str(path)):
        if sample is not None:
            session = reader.read(path, sample)
        elif trace_later and reader.trace_later:
            session = reader.read(path, trace=False)
        else:
            session = reader.read(path)
    session.format = session.format or name
    session.source = session.source or str(path)
    return session


def finish_trace(session: Session) -> bool:
    """Build the trace load_session(trace_later=True) left for later, if it left one (True then); bad input raises
    ReadError as load_session does, and the session's trace is then left empty."""
    build = session.caches.pop(PENDING_TRACE, None)
    if build is None:
        return False
    with _reading(session.source):
        session.trace = build()
    return True


def _archive_errors() -> tuple[type[BaseException], ...]:
    """What a damaged .eval archive raises: zipfile's BadZipFile only where a reader has imported zipfile (the one
    that opens archives does, when it opens one: most commands never import it)."""
    zipfile = sys.modules.get("zipfile")
    return (zlib.error, EOFError, zipfile.BadZipFile) if zipfile is not None else (zlib.error, EOFError)


@contextmanager
def _reading(file: str) -> Iterator[None]:
    """A reader's failures as one ReadError naming the file: never a traceback."""
    try:
        yield
    except ReadError:
        raise
    except OSError as exc:
        raise ReadError(file, "", f"cannot read the file: {exc.strerror or exc}") from None
    except MemoryError:
        raise ReadError(file, "", "the file is too large to read into memory") from None
    except _archive_errors() as exc:  # a damaged .eval archive
        raise ReadError(file, "", f"a damaged archive ({type(exc).__name__}: {exc})") from None
    except _UNEXPECTED as exc:
        raise ReadError(file, "", f"unexpected content ({type(exc).__name__}: {exc})") from None
