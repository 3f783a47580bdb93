"""A GUI Save As reads back silently and identically (issue 41, finding 8): after a clip, an evict and a restore in
the window, every figure `inspect --json` prints of the file saved equals what it prints of the session as saved,
and inspect says no warning the source did not."""

from __future__ import annotations

import json

import pytest

from foldscope.app import dialogs
from foldscope.core.cli.basic import summarise
from foldscope.core.cli.main import main
from foldscope.core.formats import load_session


def open_file(qtbot, window, path):
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None, timeout=60_000)
    return window.document


def largest(doc, in_view: bool) -> int:
    results = [
        i
        for i in range(doc.record_size)
        if doc.message(i).kind == "action_response" and not doc.message(i).is_clipped_copy and doc.in_view(i) == in_view
    ]
    return max(results, key=lambda i: doc.chars[i])


def figures(result: dict) -> dict:
    out = {k: v for k, v in result.items() if k not in ("file", "format", "warnings")}
    out["policy"] = {k: v.replace(str(result["file"]), "FILE") if isinstance(v, str) else v for k, v in out["policy"].items()}
    # the agent, project and version are the source file's (a native file names none); its wall times stay
    out["session"] = {k: v for k, v in out["session"].items() if k in ("start", "end", "duration_s")}
    return out


@pytest.mark.parametrize("name", ["claude_code/extracted-dd381a75.jsonl", "claude_code/session-9eda1058.jsonl"])
def test_a_gui_save_as_after_clip_evict_and_restore_reads_back_silently_with_the_same_figures(
    qtbot, window, corpus_dev, tmp_path, monkeypatch, capsys, name
):
    doc = open_file(qtbot, window, corpus_dev / name)
    actions = window.session_actions
    monkeypatch.setattr(dialogs, "show_message", lambda *args: pytest.fail(f"told {args[1:]}"))
    evicted = largest(doc, in_view=True)
    window.select_message(evicted)
    assert actions.evict().success
    clipped = largest(doc, in_view=True)
    monkeypatch.setattr(dialogs, "ask_clip_length", lambda parent, d, i: doc.chars[i] // 4)
    window.select_message(clipped)
    assert actions.clip().success
    window.select_message(evicted)
    assert actions.restore().success and doc.in_view(evicted)
    window.select_message(largest(doc, in_view=True))
    assert actions.evict().success  # the view now differs from what the record's last request was sent with
    target = tmp_path / "saved.foldscope.json"
    monkeypatch.setattr(dialogs, "save_path_dialog", lambda parent, start: str(target))
    actions.save_as_action.trigger()
    assert target.exists()
    from foldscope.core.model.launch import read_launch_policy, to_save

    saved = to_save(doc.session, doc.policy if doc.policy is not None else read_launch_policy(doc.session))
    capsys.readouterr()
    assert main(["inspect", str(target), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    source = load_session(corpus_dev / name)
    assert [w for w in printed["warnings"] if w not in source.warnings] == []
    assert figures(printed) == figures(summarise(saved))
