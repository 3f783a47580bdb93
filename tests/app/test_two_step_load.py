"""Issue 17: a session opens in two steps, the record first (sized by characters, saying so), the counts after.

What each panel shows is read when the first step lands (a slot on record_shown runs inside it, before any
later step can), never from the Document's fields alone; after the counts land every screen agrees again
(tests/app/test_same_number.py holds them to one size)."""

from __future__ import annotations

import re
import threading

import pytest

from foldscope.app import dialogs
from foldscope.app import loading as loading_module
from foldscope.app.models.messages import TOKENS
from foldscope.core.formats.demo import demo_path
from foldscope.core.readout import opening as opening_module


def shown_text(window) -> dict[str, str]:
    """Every place that names a size, as it reads on screen."""
    return {
        "record heading": window.record_list.heading.text(),
        "view heading": window.view_list.heading.text(),
        "window map": " · ".join(window.window_map.summary()),
        "status bar": window.status_label.text(),
        "timeline": window.timeline.tip_for(window.timeline.current),
        "tokens column": str(window.record_model.index(0, TOKENS).data()),
    }


def load_seeing_each_step(qtbot, window, path) -> list[dict]:
    """Open `path` in the window; each first step's record size and text as it was shown, read when it was."""
    window.show()
    seen: list[dict] = []
    window.record_shown.connect(lambda doc: seen.append({"messages": doc.record_size, **shown_text(window)}))
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None)
    return seen


def assert_no_token_figure(shown: dict) -> None:
    """No size in tokens and no estimate anywhere in what a first step showed."""
    for place, text in shown.items():
        if isinstance(text, str):
            assert "estimate" not in text and not re.search(r"[\d,]+ tokens", text), (place, text)


def test_the_first_step_shows_the_record_sized_by_characters_and_names_no_token_figure(qtbot, window):
    window.show()
    seen: list[dict] = []
    window.record_shown.connect(
        lambda doc: seen.append(
            {"counted": doc.is_counted, **shown_text(window), "actions": window.session_actions.preview_action.isEnabled()}
        )
    )
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(demo_path())
    qtbot.waitUntil(lambda: window.task is None)
    assert len(seen) == 1
    first = seen[0]
    assert first["counted"] is False and first["actions"] is False  # nothing that needs a count can run yet
    doc = window.document
    chars = sum(doc.chars)
    assert f"{chars:,} characters" in first["record heading"] and "counting tokens" in first["view heading"]
    assert "sized by characters" in first["window map"] and f"full record {chars:,} characters" in first["window map"]
    assert first["tokens column"] == ""
    assert_no_token_figure(first)  # no size in tokens, and no estimate, anywhere before the counts land
    # Once the counts land: tokens everywhere, and the map sized by them.
    assert doc.is_counted and window.session_actions.preview_action.isEnabled()
    now = shown_text(window)
    assert "estimate" in now["view heading"] and "blocks sized by their tokens" in now["window map"]
    assert now["tokens column"] == f"{doc.tokens[0]:,}"


def test_the_timeline_fills_in_with_the_counts_the_trace_lands_with(qtbot, window, monkeypatch):
    monkeypatch.setattr(loading_module, "FILL_EVERY_S", 0.0)  # every request's count reaches the timeline
    window.show()
    fills: list[tuple[int, ...]] = []
    real = window.timeline.set_counting
    monkeypatch.setattr(window.timeline, "set_counting", lambda counts, requests: fills.append(tuple(counts)) or real(counts, requests))
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(demo_path())
    qtbot.waitUntil(lambda: window.task is None)
    doc = window.document
    assert len(fills) >= 2 and [len(f) for f in fills] == sorted(len(f) for f in fills)  # it grew as it went
    assert len(fills[-1]) == len(doc.requests)
    # The counts it filled in with are the trace's own (each row's count is the same count plus its unseen head).
    assert list(fills[-1]) == [doc.measure.request(k).own_count for k in range(len(doc.requests))]


@pytest.mark.parametrize("how", ["cancelled", "failed"])
def test_a_load_stopped_after_its_first_step_puts_the_session_before_it_back(qtbot, window, monkeypatch, how):
    window.show()
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(demo_path())
    qtbot.waitUntil(lambda: window.task is None)
    before = window.document
    errors: list[str] = []
    monkeypatch.setattr(dialogs, "error_dialog", lambda parent, title, text: errors.append(text))
    if how == "failed":

        def broken(*args, **kwargs):
            raise RuntimeError("the measure broke")

        monkeypatch.setattr(opening_module, "build_document", broken)
    else:  # the second step waits until the first has been shown and cancelled, then hears it at its next report
        asked = threading.Event()

        def waiting(session, path, report, *args, **kwargs):
            assert asked.wait(30)
            report(0, 0, "Measuring requests")
            raise AssertionError("not cancelled")

        monkeypatch.setattr(opening_module, "build_document", waiting)
        window.record_shown.connect(lambda doc: (window.cancel_loading(), asked.set()))
    with qtbot.waitSignal(window.record_shown, timeout=60_000):
        window.open_path(demo_path())
    qtbot.waitUntil(lambda: window.task is None, timeout=60_000)
    assert window.document is before and window.document.is_counted
    assert "estimate" in window.view_list.heading.text()
    assert window.session_actions.preview_action.isEnabled()
    assert (errors and "the measure broke" in errors[0]) if how == "failed" else not errors


def test_a_large_line_file_shows_its_first_part_saying_so_then_the_whole_record(qtbot, window, monkeypatch, corpus_dev):
    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    monkeypatch.setattr(opening_module, "FIRST_PART_BYTES", path.stat().st_size // 4)
    monkeypatch.setattr(opening_module, "FIRST_PART_FROM", 0)
    seen = load_seeing_each_step(qtbot, window, path)
    assert len(seen) == 2
    part, whole = seen
    assert part["messages"] < whole["messages"] == window.document.record_size
    for place in ("record heading", "window map", "status bar"):
        assert "the rest still being read" in part[place], place
        assert "still being read" not in whole[place], place
    assert "reading the file" in part["view heading"] and "counting tokens" in whole["view heading"]
    assert_no_token_figure(part)  # no size in tokens, and no estimate, while the file is read


def test_a_large_branch_shows_its_record_then_its_requests_then_the_counts(qtbot, window, monkeypatch, corpus_dev):
    path = corpus_dev / "lionagi" / "branch_v0.36.0_after_context_fold.synthetic.json"
    monkeypatch.setattr(opening_module, "FIRST_PART_FROM", 0)
    seen = load_seeing_each_step(qtbot, window, path)
    requests = len(window.document.requests)
    assert len(seen) == 2 and requests > 1
    record, with_requests = seen
    assert record["messages"] == with_requests["messages"] == window.document.record_size
    assert f"{requests} requests" not in record["status bar"] and f"{requests} requests" in with_requests["status bar"]
    for step in seen:  # no size in tokens, and no estimate, before the counts land
        assert "counting tokens" in step["view heading"]
        assert_no_token_figure(step)
    assert "estimate" in window.view_list.heading.text()


def test_the_counted_document_is_shown_and_acted_on_before_the_library_stores_it(qtbot, window, monkeypatch, corpus_dev):
    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    shown = threading.Event()
    real_import = opening_module.import_into_library

    def import_after_shown(*args, **kwargs):  # the store starts only once the window shows the counted document
        assert shown.wait(30)
        return real_import(*args, **kwargs)

    monkeypatch.setattr(opening_module, "import_into_library", import_after_shown)
    window.show()
    seen: list[dict] = []

    def counted(doc) -> None:
        seen.append({"library_id": doc.library_id, "actions": window.session_actions.evict_action.isEnabled(), **shown_text(window)})
        shown.set()

    window.document_counted.connect(counted)
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None)
    assert len(seen) == 1
    before = seen[0]
    # Not stored yet, and the session's actions on: the store reads a copy taken when the session was counted.
    assert before["library_id"] is None and before["actions"] is True
    doc = window.document
    assert doc.library_id is not None and window.session_actions.preview_action.isEnabled()
    after = shown_text(window)
    assert "estimate" in before["view heading"]
    for place in ("record heading", "view heading", "window map", "timeline", "tokens column"):
        assert before[place] == after[place], place  # every size as it is once stored: the same numbers


def largest_result(doc) -> int:
    return max((i for i in doc.view_position if doc.message(i).kind == "action_response"), key=lambda i: doc.chars[i])


def test_an_edit_made_while_the_library_stores_the_session_ends_in_the_library_as_made(qtbot, window, monkeypatch, corpus_dev, tmp_path):
    from foldscope.app.save import latest_working_state
    from foldscope.app.settings import WindowSettings
    from foldscope.app.window import MainWindow
    from foldscope.core.actions.commands import Clip, Evict
    from foldscope.core.formats import load_session
    from foldscope.core.store import snapshot as snapshot_module
    from foldscope.core.store.library import Library

    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    edited = threading.Event()
    stored: list[object] = []
    real_dump, real_import = snapshot_module.dump_session_to, opening_module.import_into_library

    def dump_after_the_edits(session, out, *args):  # the import, then the snapshot's pickling, run once the edits are made
        assert edited.wait(30)
        return real_dump(session, out, *args)

    def importing(session, *args, **kwargs):
        assert edited.wait(30)
        stored.append(session)
        return real_import(session, *args, **kwargs)

    monkeypatch.setattr(snapshot_module, "dump_session_to", dump_after_the_edits)
    monkeypatch.setattr(opening_module, "import_into_library", importing)
    window.show()
    made: dict = {}

    def edit(doc) -> None:  # right as the counted document arrives, before anything is stored
        editor = window.session_actions.editor
        assert doc.library_id is None and editor.document is doc
        index = largest_result(doc)
        assert editor.do(Clip(index, 1500), f"clip of #{index}").success  # a copy appended: the record grows
        evicted = doc.index_of(doc.session.view[-1])
        assert editor.do(Evict([evicted]), f"evict of #{evicted}").success
        made.update(view=list(doc.session.view), record=[m.id for m in doc.session.record], manifest=doc.session.manifest)
        edited.set()

    window.document_counted.connect(edit)
    # Stored, then the edits autosaved: the write runs on the worker pool after document_loaded (save.session_stored).
    with qtbot.waitSignals([window.document_loaded, window.session_actions.saver.autosaved], timeout=60_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None)
    doc = window.document
    read = load_session(path)
    assert made and doc.library_id is not None
    assert list(doc.session.view) == made["view"] and window.session_actions.editor.can_undo  # nothing undone or lost
    assert stored and stored[0] is not doc.session
    with Library(window.db) as library:
        # The library holds the session as read: its snapshot, the import's messages and view are not the edits'.
        library_id, snapshot, _ = library.stored_session(path)
        assert library_id == doc.library_id
        assert [m.id for m in snapshot.record] == [m.id for m in read.record] and snapshot.view == read.view
        assert [row["message_id"] for row in library.messages(library_id)] == [m.id for m in read.record]
        assert library.view_versions(library_id)[0]["ids"] == read.view
    # And the edits as made, in the working state autosave wrote once the library held the session.
    state = latest_working_state(window.db, doc.library_id, source=str(path))
    assert state is not None and state["view"] == made["view"]
    assert [m["id"] for m in state["added"]] == made["record"][len(read.record) :]
    # A crash now: the next foldscope reopens the session from the library and puts the edits back.
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, name, when: True)
    after = MainWindow(settings=WindowSettings(tmp_path / "after.ini"), db=window.db)
    qtbot.addWidget(after)
    with qtbot.waitSignal(after.document_loaded, timeout=60_000):
        after.open_path(path)
    qtbot.waitUntil(lambda: after.task is None)
    assert list(after.document.session.view) == made["view"]
    assert [m.id for m in after.document.session.record] == made["record"]


@pytest.mark.parametrize("how", ["failed", "cancelled"])
def test_a_store_that_stops_after_an_edit_keeps_the_edited_session_shown(qtbot, window, monkeypatch, how):
    from foldscope.core.actions.commands import Evict

    errors: list[str] = []
    monkeypatch.setattr(dialogs, "error_dialog", lambda parent, title, text: errors.append(text))
    edited = threading.Event()

    def stopping(session, db, report, *args, **kwargs):
        assert edited.wait(30)
        if how == "failed":
            raise RuntimeError("the disk went away")
        report(0, 0, "Importing into the library")  # cancelled meanwhile: the report stops the store
        raise AssertionError("not cancelled")

    monkeypatch.setattr(opening_module, "import_into_library", stopping)
    window.show()
    made: list[list[str]] = []

    def edit(doc) -> None:
        last = doc.index_of(doc.session.view[-1])
        assert window.session_actions.editor.do(Evict([last]), f"evict of #{last}").success
        made.append(list(doc.session.view))
        if how == "cancelled":
            window.cancel_loading()
        edited.set()

    window.document_counted.connect(edit)
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(demo_path())
    qtbot.waitUntil(lambda: window.task is None)
    doc = window.document
    assert made and list(doc.session.view) == made[0] and doc.library_id is None  # the edit is still there
    assert window.session_actions.editor.is_modified and window.session_actions.evict_action.isEnabled()
    assert not errors and "not stored in the library" in window.statusBar().currentMessage()


def test_with_unsaved_work_kept_for_the_file_the_actions_wait_for_the_store_and_its_offer(qtbot, window, monkeypatch, tmp_path):
    from foldscope.app.settings import WindowSettings
    from foldscope.app.window import MainWindow
    from foldscope.core.actions.commands import Clip

    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(demo_path())
    qtbot.waitUntil(lambda: window.task is None)
    doc = window.document
    index = largest_result(doc)
    with qtbot.waitSignal(window.session_actions.saver.autosaved, timeout=10_000):
        assert window.session_actions.editor.do(Clip(index, 1500), f"clip of #{index}").success
    crashed_view = list(doc.session.view)  # the window is never closed: a crash
    asked: list[bool] = []
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, name, when: asked.append(True) or True)
    after = MainWindow(settings=WindowSettings(tmp_path / "after.ini"), db=window.db)
    qtbot.addWidget(after)
    at_count: list[bool] = []
    after.document_counted.connect(lambda d: at_count.append(after.session_actions.evict_action.isEnabled()))
    with qtbot.waitSignal(after.document_loaded, timeout=60_000):
        after.open_path(demo_path())
    qtbot.waitUntil(lambda: after.task is None)
    assert at_count == [False]  # an edit now would be overwritten by the offer, or the offer lost
    assert asked == [True] and list(after.document.session.view) == crashed_view
    assert after.session_actions.evict_action.isEnabled()


def test_a_file_whose_later_line_is_broken_shows_its_first_part_then_one_line_and_the_session_before(
    qtbot, window, monkeypatch, corpus_dev, tmp_path
):
    lines = (corpus_dev / "claude_code" / "session-196820da.jsonl").read_bytes().splitlines(keepends=True)
    # A copy outside the project with lines near its end that are not JSON: more than a read skips (one damaged line
    # is skipped and named, core.formats.stream.MAX_SKIPPED_LINES of them refuse the file at the one past them).
    from foldscope.core.formats.stream import MAX_SKIPPED_LINES

    broken = tmp_path / "broken.jsonl"
    at = len(lines) - 3
    damaged = MAX_SKIPPED_LINES + 1
    broken.write_bytes(b"".join(lines[:at] + [b'{"type": "user", "message": \n'] * damaged + lines[at:]))
    monkeypatch.setattr(opening_module, "FIRST_PART_BYTES", broken.stat().st_size // 4)
    monkeypatch.setattr(opening_module, "FIRST_PART_FROM", 0)
    errors: list[str] = []
    monkeypatch.setattr(dialogs, "error_dialog", lambda parent, title, text: errors.append(text))
    window.show()
    parts: list[float | None] = []
    window.record_shown.connect(lambda doc: parts.append(doc.read_part))
    with qtbot.waitSignal(window.load_failed, timeout=60_000) as failed:
        window.open_path(broken)
    qtbot.waitUntil(lambda: window.task is None)
    assert len(parts) == 1 and parts[0] is not None and parts[0] < 0.5  # the first part was shown
    line = failed.args[0]
    assert str(broken) in line and f"line {at + damaged}" in line and "\n" not in line and errors == [line]
    assert window.document is None  # what was shown before the load: nothing


def shown_when_called(qtbot, window, monkeypatch, name: str, shown) -> list[bool]:
    """Open the demo with core.readout.opening's `name` wrapped: `shown(document on screen, session passed)` at
    each call, in order."""
    seen: list[bool] = []
    real = getattr(opening_module, name)

    def wrapped(session, *args, **kwargs):
        seen.append(shown(window.document, session))
        return real(session, *args, **kwargs)

    monkeypatch.setattr(opening_module, name, wrapped)
    window.show()
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(demo_path())
    return seen


def test_the_library_import_starts_once_the_window_shows_the_counted_document(qtbot, window, monkeypatch):
    # The two would share the interpreter lock: the window paints the timeline first (app.loading.SHOWN_WAIT_S).
    def counted_copy(doc, session):  # a copy of the session shown, taken when it was counted
        return (
            doc is not None
            and doc.is_counted
            and doc.session is not session
            and [m.id for m in doc.session.record] == [m.id for m in session.record]
        )

    assert shown_when_called(qtbot, window, monkeypatch, "import_into_library", counted_copy) == [True]


def test_the_trace_is_counted_once_the_window_shows_the_first_step(qtbot, window, monkeypatch):
    # Counted at once, the measure held the interpreter lock while the window painted the first step, which then
    # took seconds (app.loading.FIRST_SHOWN_WAIT_S).
    def first_step(doc, session):
        return doc is not None and not doc.is_counted and doc.session is session

    assert shown_when_called(qtbot, window, monkeypatch, "measure_requests", first_step) == [True]


def test_a_landed_load_freezes_its_session_and_lets_the_one_before_go(qtbot, window, tmp_path):
    # The load runs with the collector off; the first allocations after it set off a full collection over the whole
    # session (0.56 s for the first step at the 50k Branch), unless what survives is frozen (app.loading.settle_heap).
    import gc
    import weakref

    from foldscope.core.formats.demo import write_demo

    window.show()
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(demo_path())
    first = weakref.ref(window.document)
    window.document.session.extras["held"] = [window.document]  # a cycle, as a session and its counter make one
    assert gc.get_freeze_count() > 0 and gc.isenabled()
    other = tmp_path / "other.json"
    write_demo(other, rounds=3)
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(str(other))
    assert first() is None  # collected when the next load landed, not kept frozen
    assert gc.get_freeze_count() > 0


def test_the_load_gives_its_freed_memory_back_while_the_window_paints_and_before_the_snapshots_pickling(qtbot, window, monkeypatch):
    # glibc keeps what a thread frees, counted in the window's memory: the measure's temporaries before the full
    # record's layout sizes the messages (at 50k the measure's end was the window's peak, 15 MiB of them held), that
    # layout's after it, the count's and the cache's temporaries while the window paints the counted document, the
    # paint's own once painted, the memo's copy before the import, the import's cache before the snapshot's pickling.
    from foldscope.core.store import snapshot

    moments: list[str] = []
    monkeypatch.setattr(opening_module, "_malloc_trim", lambda: lambda pad: moments.append("given back") or 0)
    named = (
        (opening_module, "record_sizes"),
        (loading_module, "document_cache"),
        (snapshot, "dump_session_to"),
        (opening_module, "import_into_library"),
    )
    for module, name in named:
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *args, _real=real, _name=name, **kwargs: moments.append(_name) or _real(*args, **kwargs))
    window.show()
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(demo_path())
    sizes, cache, imported, dump = (
        moments.index(name) for name in ("record_sizes", "document_cache", "import_into_library", "dump_session_to")
    )
    assert moments[:sizes] == ["given back"] and moments[sizes : sizes + 2] == ["record_sizes", "given back"]  # around the sizing
    assert moments[sizes + 2 : cache] == ["given back"]  # after the count
    # while the window paints; once it has (its paint's); the memo pickled
    assert moments[cache:imported] == ["document_cache", "given back", "given back", "given back"]
    # the import's cache, then the pickling's (the snapshot pickled after the import, to take its names)
    assert moments[imported:] == ["import_into_library", "given back", "dump_session_to", "given back", "given back"]


def test_the_timeline_hears_the_counts_five_times_a_second(monkeypatch):
    """Each hearing of the counts so far is a paint of the loading timeline and the busy bar on the GUI thread, which
    the measure waits on for the interpreter: 2,000 requests counted over two seconds are heard at most every 0.2 s
    (11 times, the last request's included; 21 at 0.1 s), and the counts heard last are all of them."""
    now = [0.0]
    monkeypatch.setattr(loading_module.time, "monotonic", lambda: now[0])

    class Heard:
        def __init__(self) -> None:
            self.interims: list = []

        def report(self, *args) -> None:
            pass

        def interim(self, value) -> None:
            self.interims.append(value)

    heard = Heard()
    fill = loading_module.TraceFill(heard)
    for k in range(2000):
        now[0] = 1.0 + k * 0.001
        fill(k, 2000, k)
    assert 1 < len(heard.interims) <= 11
    assert heard.interims[-1].counts == tuple(range(2000))
