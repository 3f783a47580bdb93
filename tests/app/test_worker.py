"""The worker helper: results, errors, progress and cancel arrive as signals on the GUI thread."""

from __future__ import annotations

import threading

from foldscope.app.worker import Task, run_task


def test_a_task_reports_progress_then_its_result_on_the_gui_thread(qtbot):
    gui_thread = threading.get_ident()
    seen: list[tuple[int, int, str]] = []
    arrived_on: list[int] = []

    def work(progress):
        for i in range(3):
            progress.report(i, 3, "step")
        return threading.get_ident()

    task = Task(work)
    task.progressed.connect(lambda d, t, label: seen.append((d, t, label)))
    task.succeeded.connect(lambda result: arrived_on.append(threading.get_ident()))
    with qtbot.waitSignal(task.succeeded, timeout=5000) as result:
        task.start()
    qtbot.waitUntil(lambda: task.is_done)
    assert result.args[0] != gui_thread  # the work ran in a worker thread
    assert arrived_on == [gui_thread]  # and its result arrived on the GUI thread
    assert seen == [(0, 3, "step"), (1, 3, "step"), (2, 3, "step")]


def test_a_failing_task_hands_over_its_exception(qtbot):
    def work(progress):
        raise ValueError("bad input: line 3")

    failures: list[BaseException] = []
    task = run_task(work, failed=failures.append)
    qtbot.waitUntil(lambda: task.is_done and bool(failures))
    assert isinstance(failures[0], ValueError)
    assert str(failures[0]) == "bad input: line 3"


def test_cancel_stops_a_task_at_its_next_report(qtbot):
    started = threading.Event()
    release = threading.Event()
    outcomes: list[str] = []

    def work(progress):
        started.set()
        release.wait(5)
        progress.report(1, 2, "after cancel")
        raise AssertionError("report should have raised Cancelled")

    task = run_task(
        work,
        was_cancelled=lambda: outcomes.append("cancelled"),
        succeeded=lambda r: outcomes.append("succeeded"),
        failed=lambda e: outcomes.append(f"failed {e}"),
    )
    qtbot.waitUntil(started.is_set)
    task.cancel()
    release.set()
    qtbot.waitUntil(lambda: task.is_done and bool(outcomes))
    assert outcomes == ["cancelled"]


def test_work_waiting_for_the_gui_to_show_an_interim_result_goes_on_only_once_it_is_shown(qtbot):
    order: list[str] = []

    def work(progress):
        progress.interim("counted")
        progress.wait_shown(30)
        order.append("after the wait")
        return "done"

    def interim(value):  # the GUI thread shows it, a while later, then says so
        order.append("shown")
        task.shown()

    task = Task(work)
    task.interim_reported.connect(lambda value: qtbot.wait(50) or interim(value))
    with qtbot.waitSignal(task.succeeded, timeout=10_000):
        task.start()
    assert order == ["shown", "after the wait"]


def test_cancel_releases_work_waiting_for_the_gui(qtbot):
    outcomes: list[str] = []
    waiting = threading.Event()

    def work(progress):
        waiting.set()
        progress.wait_shown(30)
        return "went on"

    task = run_task(work, was_cancelled=lambda: outcomes.append("cancelled"), succeeded=outcomes.append)
    qtbot.waitUntil(waiting.is_set)
    task.cancel()
    qtbot.waitUntil(lambda: task.is_done and bool(outcomes), timeout=5000)
    assert outcomes == ["cancelled"]


def test_a_task_whose_owner_is_deleted_while_it_runs_ends_as_cancelled_without_a_traceback(qtbot, capfd):
    # A window closed while its session still imports into the library deletes the load task's Qt side; the worker
    # must then stop at its next report and print nothing (Qt prints a RuntimeError from an emit in a pool thread).
    import shiboken6

    from foldscope.app.qt import QObject
    from foldscope.app.worker import Cancelled, pool

    owner = QObject()
    release = threading.Event()
    outcome: list[str] = []

    def work(progress):
        release.wait(5)
        try:
            progress.report(1, 2, "importing")
        except Cancelled:
            outcome.append("cancelled")
            raise
        outcome.append("went on")
        return 1

    task = Task(work, parent=owner)
    task.start()
    shiboken6.delete(owner)  # the Task's C++ object goes with its parent
    release.set()
    assert pool().waitForDone(5000)
    assert task.is_done and outcome == ["cancelled"]
    assert "Traceback" not in capfd.readouterr().err
