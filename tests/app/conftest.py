"""GUI test fixtures: an isolated window, sessions built from foldscope.core.model.session, and no worker left running."""

from __future__ import annotations

import pytest

from foldscope.app.settings import WindowSettings
from foldscope.app.window import MainWindow
from foldscope.app.worker import pool
from foldscope.core.model.session import FullRecord, Message, Provenance, Session
from foldscope.core.readout.document import Document, build_document

# The offscreen platform says this whenever a window is shown; it is the plugin's limit, not ours.
OFFSCREEN_NOISE = "This plugin does not support propagateSizeHints"


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/app/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE))


@pytest.fixture(autouse=True)
def no_worker_left_running(qapp):
    """Fail a test that leaves a worker task running (and stop it so the next test starts clean)."""
    yield
    running = pool().activeThreadCount()
    if running:
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
    messages.append(
        Message("note", "note", 31.0, {"assistant_response": "Folded rounds 0 and 1."}, metadata={"context_first_index": 2})
    )
    record = FullRecord(messages)
    view = ["sys", "task", "note"] + [m.id for m in messages[8:-2] if m.id != f"res{last}"] + ["copy"]
    return Session(record=record, view=view, format="lionagi", source=src)


@pytest.fixture
def document() -> Document:
    return build_document(make_session(), "made-in-test.json")


@pytest.fixture(autouse=True)
def unsaved_prompt_discards():
    """Closing a window with unsaved changes asks (save_module.ask_unsaved): a test that closes one answers
    "discard" unless it replaces the prompt itself; an unexpected recovery offer fails; no modal dialog can hang a run."""
    from foldscope.app import save as save_module

    original, recover = save_module.ask_unsaved, save_module.ask_recover
    save_module.ask_unsaved = lambda parent, name: "discard"
    save_module.ask_recover = lambda parent, name, when: pytest.fail("offered a recovery the test did not expect")
    yield
    save_module.ask_unsaved, save_module.ask_recover = original, recover


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


@pytest.fixture(autouse=True)
def no_unexpected_error_dialog(monkeypatch):
    """A modal error dialog would block a headless run forever: record it and fail the test instead.

    Tests that expect a dialog replace `error_dialog` themselves, after this fixture.
    """
    from foldscope.app import window as window_module

    shown: list[str] = []
    monkeypatch.setattr(window_module, "error_dialog", lambda parent, title, text: shown.append(f"{title}: {text}"))
    yield
    if shown:
        pytest.fail(f"unexpected error dialog: {shown}")
