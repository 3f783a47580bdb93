"""GUI test fixtures: an isolated window, sessions built from foldscope.core.model.session, and no worker left running."""

from __future__ import annotations

import pytest

from foldscope.app.settings import WindowSettings
from foldscope.app.window import MainWindow
from foldscope.app.worker import pool
from foldscope.core.model.session import FullRecord, Message, Provenance, Session
from foldscope.core.readout.document import Document

# The offscreen platform says this whenever a window is shown; it is the plugin's limit, not ours.
from foldscope.core.readout.opening import build_document

OFFSCREEN_NOISE = "This plugin does not support propagateSizeHints"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/app/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE))


@pytest.fixture(autouse=True)
def no_worker_left_running(qapp):
    """Fail a test that leaves a worker task running (and stop it so the next test starts clean)."""
    yield
    # A task that has just reported its result may still be returning from its run on its thread: a moment's grace,
    # so that only a task still working (one the test left behind) fails, not one a loaded machine was slow to end.
    running = pool().activeThreadCount()
    if running and not pool().waitForDone(1_000):
        pool().waitForDone(10_000)
        pytest.fail(f"{running} worker task(s) still running after the test")


@pytest.fixture
def settings(tmp_path) -> WindowSettings:
    return WindowSettings(tmp_path / "settings.ini")


@pytest.fixture
def window(qtbot, settings, tmp_path) -> MainWindow:
    win = MainWindow(settings=settings, db=str(tmp_path / "library.db"))
    qtbot.addWidget(win)
    return win


def make_session(rounds: int = 4) -> Session:
    """A small session of every kind: calls and results, a clipped copy, and a note that folded two rounds."""
    src = "made-in-test.json"
    messages = [
        Message("sys", "system", 1.0, {"system_message": "You are a careful reviewer."}, provenance=Provenance(src, 3)),
        Message("task", "instruction", 2.0, {"instruction": "Review config loading."}, provenance=Provenance(src, 9)),
    ]
    for r in range(rounds):
        messages += [
            Message(f"a{r}", "assistant", 10.0 + r, {"assistant_response": f"Round {r}: reading mod{r}.py"}),
            Message(
                f"call{r}",
                "action_request",
                10.1 + r,
                {"function": "reader", "arguments": {"path": f"src/mod{r}.py"}, "action_response_id": f"res{r}"},
            ),
            Message(
                f"res{r}",
                "action_response",
                10.2 + r,
                {
                    "function": "reader",
                    "arguments": {"path": f"src/mod{r}.py"},
                    "output": {"success": True, "content": f"def load_{r}(path):\n    return open(path).read()\n" * 20},
                    "action_request_id": f"call{r}",
                },
                provenance=Provenance(src, 20 + r),
            ),
        ]
    last = rounds - 1
    messages.append(
        Message(
            "copy",
            "action_response",
            30.0,
            {"function": "reader", "arguments": {"path": f"src/mod{last}.py"}, "output": "def load…[clipped]"},
            metadata={"clipped_from": f"res{last}"},
        )
    )
    messages.append(Message("note", "note", 31.0, {"assistant_response": "Folded rounds 0 and 1."}, metadata={"context_first_index": 2}))
    record = FullRecord(messages)
    view = ["sys", "task", "note"] + [m.id for m in messages[8:-2] if m.id != f"res{last}"] + ["copy"]
    return Session(record=record, view=view, format="lionagi", source=src)


@pytest.fixture
def document() -> Document:
    return build_document(make_session(), "made-in-test.json")


@pytest.fixture
def demo_window(qtbot, window):
    """The main window, shown, with the bundled demo session loaded."""
    from foldscope.core.formats.demo import demo_path

    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(demo_path())
    qtbot.waitUntil(lambda: window.task is None)
    return window


# What each modal answers when a test did not replace it: closing a window with unsaved changes discards
# them; any other modal is recorded and fails the test (a modal would block a headless run forever).
MODAL_ANSWERS = {"ask_unsaved": "discard"}
MODALS = (
    "error_dialog",
    "show_message",
    "show_refusal",
    "ask_unsaved",
    "ask_recover",
    "ask_keep_last",
    "ask_span",
    "ask_clip_length",
    "ask_clip_into_view",
    "save_path_dialog",
    "open_session_path",
    "profile_dialog",
    "show_peek",
    "choose_folder",
    "choose_sample",
    "ask_agent_session",
    "choose_library_path",
    "fresh_library_path",
    "confirm_remove",
    "report_path_dialog",
    "text_path_dialog",
    "show_text",
)


@pytest.fixture(autouse=True)
def no_unexpected_modal(monkeypatch):
    """Every modal in foldscope.app.dialogs (the one place the app shows them) replaced for the test.

    Tests that expect a modal replace it on `dialogs` themselves, after this fixture.
    """
    from foldscope.app import dialogs

    shown: list[str] = []
    for name in MODALS:
        if name in MODAL_ANSWERS:
            monkeypatch.setattr(dialogs, name, lambda *args, _answer=MODAL_ANSWERS[name]: _answer)
        else:
            monkeypatch.setattr(dialogs, name, lambda *args, _name=name: shown.append(f"{_name}{args[1:]}"))
    yield
    if shown:
        pytest.fail(f"unexpected modal dialog: {shown}")
