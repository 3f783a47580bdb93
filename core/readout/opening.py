"""Opening a session: read the file (a large one's first part first), measure and count it into a Document, keep it in the library."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from foldscope.core.model import collector
from foldscope.core.model.policy import Policy, PolicyChoice
from foldscope.core.model.record_prefix import RecordPrefix
from foldscope.core.model.session import Session
from foldscope.core.readout.document import Document, Report, _no_report
from foldscope.core.readout.fold_facts import fold_rows
from foldscope.core.readout.message_sizes import SIZES_ID, RecordSizes, record_sizes
from foldscope.core.readout.trace_facts import measure_requests
from foldscope.core.request.count import Counter

# Hears each recorded request's count as the trace is measured: (request, requests, count).
OnCount = Callable[[int, int, int], None]

# A Claude Code or Codex file over FIRST_PART_FROM bytes shows its first FIRST_PART_BYTES while the rest is read, so
# a session of any size is on screen within DESIGN.md's 3 s: the first look costs a small share of the whole read.
# Under FIRST_PART_FROM the whole read is quick enough, and reading the start twice would only delay the whole
# record (the figures are in docs/performance.md). The first part is read again by the whole read, on the path to
# the counted timeline: 4 MiB (about 900 messages of a Claude Code file, pages of lists) cost 0.05 s of the
# window's CPU at 50,000 messages where 16 MiB cost 0.20.
FIRST_PART_BYTES = 4 * 2**20
FIRST_PART_FROM = 64 * 2**20
# A read costs by the line as much as by the byte, so a file whose head says it holds over FIRST_PART_LINES_FROM
# lines shows a first part too, whatever its bytes, and a first part stops after FIRST_PART_LINES lines. The lines
# are the bytes' share (a line of over 3.3 KB ends a part by its bytes).
FIRST_PART_LINES = 1_250
FIRST_PART_LINES_FROM = 20_000
# The file's lines are judged from its head's first LINES_SAMPLE lines within LINES_SAMPLE_BYTES (a count of
# newlines, milliseconds), not from the part's: a head of long lines then many short ones is judged as before.
LINES_SAMPLE = 5_000
LINES_SAMPLE_BYTES = 16 * 2**20


def line_end(path: str, lines: int, limit: int) -> int | None:
    """Where the file's first `lines` lines end (the byte after the last one's newline), or None when they do not
    all end within its first `limit` bytes."""
    found, read = 0, 0
    with open(path, "rb") as handle:
        while read < limit:
            chunk = handle.read(min(2**20, limit - read))
            if not chunk:
                return None
            newlines = chunk.count(b"\n")
            if found + newlines >= lines:
                at = -1
                for _ in range(lines - found):
                    at = chunk.index(b"\n", at + 1)
                return read + at + 1
            found += newlines
            read += len(chunk)
    return None


def first_part_end(path: str, size: int) -> int | None:
    """Where the first part of a file of `size` bytes ends, or None when the whole read is quick enough: a file
    over FIRST_PART_FROM bytes, or whose first LINES_SAMPLE lines say it holds over FIRST_PART_LINES_FROM, reads
    to the end of the line at FIRST_PART_BYTES or of line FIRST_PART_LINES, whichever comes first."""
    sample = line_end(path, LINES_SAMPLE, min(size, LINES_SAMPLE_BYTES))
    many_lines = sample is not None and size * LINES_SAMPLE > FIRST_PART_LINES_FROM * sample
    if size <= max(FIRST_PART_FROM, FIRST_PART_BYTES) and not many_lines:
        return None
    end = line_end(path, FIRST_PART_LINES, min(size, FIRST_PART_BYTES))
    return end if end is not None else FIRST_PART_BYTES


def size_of(path: str) -> int:
    """The file's size, 0 when it cannot be had (load_session then says why in one line)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def first_part(path: str) -> Document | None:
    """The first part of a large Claude Code or Codex file (first_part_end) as the first step shows it (read_part: the
    share read), or None for any other file, or one whose first part does not read (the whole read reports it).
    The lines are read as following a live file reads them, so the record is the start of the whole file's."""
    from foldscope.core.formats import detect_format
    from foldscope.core.formats.follow import Follower
    from foldscope.core.formats.registry import format_named
    from foldscope.core.model.session import ReadError

    try:
        # The format first: a large file of another format is not searched for its lines. Its declaration says
        # whether its first lines read as the file's start (FormatSpec.first_part: Claude Code's and Codex's do).
        spec = format_named(detect_format(path))
        if spec is None or not spec.first_part:
            return None
        size = os.path.getsize(path)
        until = first_part_end(path, size)
        if until is None:
            return None
        follower = Follower(path)
        follower.poll(until=until)
        session = follower.session()
    except (OSError, ReadError):
        return None
    document = first_document(session, path)
    document.read_part = follower.bytes_read / size
    return document


def first_document(session: Session, path: str, chars: list[int] | None = None) -> Document:
    """The reader's output as the GUI shows it first: the full record, the active view and why each message is
    out, each message's characters (`chars`: as a first document of this record found them), and nothing counted
    (`is_counted` False). Cheap: no tokenising, no trace."""
    if chars is None or len(chars) != len(session.record):
        chars = [len(m.text) for m in session.record]
    document = Document(session=session, path=path, tokens=[], chars=chars, is_counted=False)
    document.show_view(session.view)
    return document


def build_document(
    session: Session,
    path: str,
    report: Report = _no_report,
    policy: Policy | PolicyChoice | None = None,
    *,
    tokens: list[int] | None = None,
    on_count: OnCount | None = None,
    counter: Counter | None = None,
    chars: list[int] | None = None,
) -> Document:
    """Measure the trace, count every message (unless `tokens` holds their stored counts, in record order) and
    gather the view facts; reports progress as it goes. `policy`: the policy in force (a what-if's), or the
    choice made at start (a profile and flags) over the session's launch record. `on_count(k, requests, count)`
    hears each request's count as the trace's counting pass reaches it (the timeline fills in as it goes). `counter`:
    one seeded with counts kept before (a session reopened from the library), else a new one. `chars`: each
    message's characters as the first document found them (else each message's text is made again)."""
    record = session.record
    total = len(record)
    counter = counter if counter is not None else Counter(threads=1)
    # The cache causes' pass rides on the trace's count (the cache lane and the Cost panel read it): no count of its own.
    # Each message as the full record compiled as one request carries it (the figure inspect and the Composition
    # panel give), sized as the trace's last request is measured: nearly every block is counted by then, and the few
    # no request carried are counted by the child counting ahead, before it stops.
    sized: list[RecordSizes] = []

    def size_record(measure) -> None:
        release_freed()  # what the measure has freed, given back before the full record's layout comes on top
        sized.append(record_sizes(measure))
        release_freed()  # and that layout's, before the requests' facts

    facts = measure_requests(session, counter, report, policy, on_count, cache_pass=True, at_last=size_record)
    if chars is None or len(chars) != total:  # else each message's characters as the first document found them
        chars = [len(m.text) for m in record]
    assert facts.measure is not None
    report(0, total, "Sizing the messages")
    sizes = sized[0] if sized else record_sizes(facts.measure)  # a session without requests: sized now
    if tokens is None or len(tokens) != total:
        tokens = sizes.tokens
    report(total, total, "Sizing the messages")
    document = Document(session=session, path=path, tokens=tokens, chars=chars, counter=counter, record_count=sizes.total)
    document.requests, document.rules, document.unseen_head = facts.requests, facts.rules, facts.unseen_head
    document.now_size, document.scale, document.policy = facts.now_estimate, facts.scale, facts.policy
    # The head belongs to the session (the Measure keeps it there): the fold, its preview and every action measure with it.
    document.measure = document._measure = facts.measure
    document.now_predicted, document.next_basis = facts.now_predicted, facts.next_basis
    document.context_window, document.window_source = facts.context_window, facts.window_source
    document.show_view(session.view)
    views = [r.view for r in document.requests] + [tuple(session.view)]
    document.folds = fold_rows(session, views, [r.at for r in facts.measure.requests])
    document.cache_pass = facts.cache_pass  # core.readout.cost_facts.document_cache makes the cache report from it
    return document


def open_document(
    path: str | os.PathLike,
    db: str | None = None,
    report: Report = _no_report,
    policy: Policy | PolicyChoice | None = None,
    sample: str | None = None,
    *,
    shown: Callable[[Document], None] | None = None,
    on_count: OnCount | None = None,
    on_counted: Callable[[Document], None] | None = None,
) -> Document:
    """Read a session file (`sample`: one sample of an Inspect AI log), import it into the library, and
    build its Document (runs in a worker).

    Two steps: as soon as the file is read, `shown` gets its first_document (the lists and the window map,
    nothing counted; a large line-format file's first part before that, first_part); then the trace is
    measured (`on_count` hears each request's count) and every message counted; `on_counted` gets the counted
    Document before it is stored in the library, and the stored one is returned. The store reads a copy taken
    before `on_counted` (as_counted): from then on the session may be edited while it runs. A session the library
    holds a current snapshot of (core.store.snapshot, docs/library.md) is rebuilt from it instead of read, its
    counter seeded with the counts kept: nothing is read or counted again.

    A library that cannot be used (read-only, full, damaged, not a database, from a newer foldscope) never
    stops the session from opening: the Document is built from the file in memory, without a library id
    (so no autosave and no search), and says why in library_problem.
    """
    with collector.spared():  # the collector off for the whole load (core.model.collector)
        return _open_document(str(Path(path)), db, report, policy, sample, shown, on_count, on_counted)


def _open_document(
    path: str,
    db: str | None,
    report: Report,
    policy: Policy | PolicyChoice | None,
    sample: str | None,
    shown: Callable[[Document], None] | None,
    on_count: OnCount | None,
    on_counted: Callable[[Document], None] | None,
) -> Document:
    from foldscope.core.formats import load_session
    from foldscope.core.model.session import LibraryError
    from foldscope.core.request.counting.backend import Backend, hint
    from foldscope.core.request.long_pieces import reporting

    report(0, 0, f"Reading {Path(path).name}")
    # A session the library holds a current snapshot of is rebuilt from it, its counter seeded with the counts kept:
    # neither the file is parsed nor anything counted again (core.store.snapshot says when a snapshot is current).
    problem, reopened = None, None
    try:
        reopened = reopen_from_library(db, path, sample)
    except LibraryError as exc:
        problem = str(exc)
    # The window's process leaves to a child counting ahead every count it could send it, so it builds no encoder for the
    # measure where one runs (64 MiB of the window's peak); where none runs (no free core) it counts in-line.
    counter, stored = Counter(threads=1, backend=Backend(counts_here=False)), None
    if reopened is not None:
        library_id, session, memo, stored = reopened
        if memo is not None:
            counter.seed(*memo)
    else:
        if shown is not None and sample is None:
            _show_part(path, shown)
        # A large Branch's trace is built after its record is on screen (a fifth of its read; the status says the
        # requests are being measured meanwhile), then the first step is shown again with the
        # requests' reported input. A smaller file's is built in the read: a second showing would cost more.
        later = shown is not None and size_of(path) > FIRST_PART_FROM
        hint(path)  # about to be read and measured: a counting child the measure will want starts during the read
        session = load_session(path, sample=sample, trace_later=later)
    chars = _show_first(session, path, shown)
    snapshot = None
    if reopened is None and problem is None:
        # Counted first, then imported with its counts in one transaction: a count stopped or failed (a kill, a
        # cancel) leaves nothing in the library. The library is not asked for this session's sizes first: they are
        # counted all the same (record_sizes), and asking hashed the whole file before the count, as the import does.
        from foldscope.core.store.snapshot import as_read

        # As read (the trace's measure sets the unseen head), pickled once the counted document is shown.
        snapshot = as_read(session)
    tokenised_before = counter.tokenised_chars
    # One long message reports its own progress meanwhile.
    with reporting(lambda done, total: report(done // 1000, max(1, total // 1000), "Counting one long message")):
        document = build_document(session, path, report, policy, tokens=stored, on_count=on_count, counter=counter, chars=chars)
    release_freed()  # the read's and the count's temporaries
    document.library_problem = problem
    # What the library stores, as it stands now: once `on_counted` has the document, the window may edit the session
    # (its record grows, its view and metadata change) and count with its counter while the store runs.
    kept = None
    if problem is None and (reopened is None or counter.tokenised_chars > tokenised_before):
        # The reader's extras as the snapshot copied them: no count or measure writes them (a followed file's reader
        # does, later), and a second copy (the line starts, the unsent lines: 0.8 MiB at 50k) stayed to the store's end.
        kept = as_counted(session, document.tokens, counter, extras=snapshot.extras if snapshot is not None else None)
        if snapshot is not None:
            snapshot.record = kept.session.record  # the record as read: the count changed nothing in it
    if on_counted is not None:
        on_counted(document)
    if kept is not None and reopened is None:
        release_freed()  # what the window's paint of it freed (its thread's), before the memo's pickling comes on top
        kept = kept.pickled()  # its memo's dict (5 MB at 50k) let go before the store's own needs come on top
        release_freed()  # and its pages with it, before the import (then the snapshot's pickling)
    if problem is None:
        _keep_in_library(document, db, path, sample, report, library_id if reopened is not None else None, kept, snapshot)
        release_freed()
    return document


def library_folder(db: str | None) -> Path | None:
    """The folder of the library file (`db`, else the default one); None for a library in memory."""
    from foldscope.core.store.library_file import default_path

    if db == ":memory:":
        return None
    return (Path(db) if db is not None else default_path()).parent


def release_freed() -> None:
    """Hand the pages the C allocator holds free back to the system (glibc's malloc_trim; nothing elsewhere). A load
    frees tens of MB it used for a while (the reader's lines, the count's layouts, the snapshot's pickling, SQLite's
    import cache); glibc keeps most of them, counted in the process's memory, where the next step's needs would
    come on top (13 MB of a 50,000-message load's 335 MB peak). A few milliseconds."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if sys.platform != "linux":
        return None
    import ctypes

    try:
        return ctypes.CDLL(None).malloc_trim  # glibc's; a C library without it (musl) raises AttributeError
    except (OSError, AttributeError):
        return None


def _show_part(path: str, shown: Callable[[Document], None]) -> None:
    """Show a large file's first part (first_part) while the rest is read. Only the window holds it, until the whole
    record replaces it: kept through the load, its session (a 16 MB part: 11 MB) was still alive at the load's peak."""
    part = first_part(path)
    if part is not None:
        shown(part)


def _show_first(session: Session, path: str, shown: Callable[[Document], None] | None) -> list[int] | None:
    """Show the session as read (first_document), and again once a trace built after the read is finished; return its
    messages' characters, for the counted document (the first document's, not each message's text made again: a
    Branch's outputs would be JSON encoded once more). A copy, as that document is the window's until the counted one
    lands; the document itself is not kept here, so the window lets it go then, not after the library's import."""
    from foldscope.core.formats import finish_trace

    if shown is None:
        return None
    first = first_document(session, path)
    shown(first)
    if finish_trace(session):
        first = first_document(session, path, chars=first.chars)
        shown(first)
    return list(first.chars)


def _keep_in_library(
    document: Document,
    db: str | None,
    path: str,
    sample: str | None,
    report: Report,
    reopened_id: int | None,
    kept: StoreCopy | None,
    snapshot: Session | None,
) -> None:
    """Store the counted copy: a reopened session's new counts (`reopened_id`: its library id), else the whole session
    with its snapshot; a library that fails says why in the document's library_problem."""
    from foldscope.core.model.session import LibraryError

    try:
        if reopened_id is not None:
            document.library_id = reopened_id
            if kept is not None:  # counted what the memo lacked: keep it for next time
                keep_counts(db, reopened_id, path, sample, kept.session, kept.memo)
        else:
            from foldscope.core.store.snapshot import spilled

            assert kept is not None
            # The import comes after the counted document, while the session and its count are held: with SQLite's
            # default cache, not one the indexes' size (10 MiB over the window's peak at 50,000 messages). It comes
            # before the snapshot's pickling, so a huge text's name in the snapshot (its UTF-8 size and SHA-256) is the
            # one the import's write of that UTF-8 hashed, not an encode and a hash of the text again (as inspect --db's
            # keep does; docs/performance.md, timeline26).
            names: dict[int, tuple[str, int, str]] = {}
            document.library_id = import_into_library(kept.session, db, report, kept.tokens, least_cache=True, names=names)
            release_freed()  # SQLite's import cache
            # Pickled into a temporary file beside the library, never held beside the counted session.
            with spilled(snapshot, library_folder(db), held=True, names=names) as data:
                release_freed()  # the pickling's
                keep_snapshot(db, document.library_id, kept.session, path, sample, kept.memo, data)
    except LibraryError as exc:
        document.library_problem = str(exc)


@dataclass(frozen=True)
class StoreCopy:
    """A counted session as the library stores it, copied when counted: the session's own fields (as_read) with a
    record of its own, each message's size and the counter's memo. Edits made meanwhile (an appended copy or note,
    another view, the branch's metadata, counts of what they added) reach none of them."""

    session: Session
    tokens: list[int]
    memo: tuple[Mapping, ...] | bytes  # Counter.memo(), or its bytes as the library keeps them (pickled)

    def pickled(self) -> StoreCopy:
        """This copy with its memo pickled over its record (snapshot_memo.dump_memo: 0.6 MB at 50,000 messages)."""
        from foldscope.core.store.snapshot_memo import dump_memo

        return self if isinstance(self.memo, bytes) else replace(self, memo=dump_memo(self.memo, self.session.record))


def as_counted(session: Session, tokens: list[int], counter: Counter, extras: dict | None = None) -> StoreCopy:
    """What the store reads, taken before anything else may change the session (cheap: no message is copied);
    `extras`: as_read's."""
    from foldscope.core.store.snapshot import as_read

    copy = as_read(session, extras)
    copy.record = RecordPrefix(session.record)  # the record as it stands, read from its own list: it only grows
    return StoreCopy(copy, list(tokens), counter.memo())


def reopen_from_library(db: str | None, path: str, sample: str | None) -> tuple[int, Session, tuple | None, list[int] | None] | None:
    """(library id, the session, the counter's memo, each message's stored size) from the library's current
    snapshot of this file; None when there is none (never opened, changed since, or read by other reader code)."""
    from foldscope.core.store.library import Library

    with Library(db) as library:
        found = library.stored_session(path, sample)
        if found is None:
            return None
        library_id, session, memo = found
        return library_id, session, memo, library.token_counts(library_id, SIZES_ID)


def keep_snapshot(
    db: str | None,
    library_id: int,
    session: Session,
    path: str,
    sample: str | None,
    memo: tuple[Mapping, ...] | bytes,
    data: bytes | BinaryIO | None,
) -> None:
    """Keep the session as read (`data`) and what its count counted (the counter's memo), so the next open reads
    and counts nothing."""
    from foldscope.core.store.library import Library

    with Library(db) as library:
        library.keep_snapshot(library_id, session, path, sample, memo=memo, data=data)


def keep_counts(
    db: str | None, library_id: int, path: str, sample: str | None, session: Session, memo: tuple[Mapping, ...] | bytes
) -> None:
    from foldscope.core.store.library import Library

    with Library(db) as library:
        library.keep_memo(library_id, path, sample, session.record, memo)


def import_into_library(
    session: Session,
    db: str | None,
    report: Report,
    tokens: list[int] | None = None,
    *,
    least_cache: bool = False,
    names: dict[int, tuple[str, int, str]] | None = None,
) -> int:
    """Import into the SQLite library (all or nothing, with each message's size when given, in the same
    transaction; `least_cache` and `names`: Library.import_session's); the connection opens and closes in this thread."""
    from foldscope.core.store.library import Library

    report(0, 0, "Importing into the library")
    with Library(db) as library:
        counts = (SIZES_ID, tokens) if tokens is not None else None
        return library.import_session(session, token_counts=counts, least_cache=least_cache, names=names)


def keep_token_counts(db: str | None, library_id: int, tokens: list[int]) -> None:
    """Store each message's size with its meaning (SIZES_ID), so a reopened session need not size them again."""
    from foldscope.core.store.library import Library

    with Library(db) as library:
        library.store_token_counts(library_id, SIZES_ID, tokens)
