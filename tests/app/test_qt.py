"""The Qt binding itself: a Python signal emit must not eat references (PySide6 6.12.0 on CPython 3.11 did)."""

from __future__ import annotations

import sys

from foldscope.app.qt import QObject, Signal


class _Emitter(QObject):
    fired = Signal(object)


def test_emitting_a_signal_keeps_the_reference_count_of_true(qapp):
    emitter = _Emitter()
    received: list[int] = []
    emitter.fired.connect(received.append)
    before = sys.getrefcount(True)
    for i in range(200):
        emitter.fired.emit(i)
    after = sys.getrefcount(True)
    assert received == list(range(200))
    # A binding that drops a reference per emit makes the interpreter abort once True's count hits zero.
    assert after >= before - 5, f"True lost {before - after} references over 200 emits"
