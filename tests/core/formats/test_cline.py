"""The Cline (Roo Code, Kilo Code) reader: a request per api_req_started with its usage as the ui recorded it, the
companion file read from beside either one, and Cline's and Roo's compactions with their sizes before and after."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import detect_format, load_session
from foldscope.core.formats.discover import find_sessions
from foldscope.core.readout.accuracy import Accuracy, accuracy
from foldscope.core.readout.opening import open_document
from foldscope.core.request.trace_measure import measure_trace
from tests.core.reader_checks import check_session
from tests.paths import CORPUS

API, UI = "api_conversation_history.json", "ui_messages.json"


def _tasks() -> list[Path]:
    # Staged until this reader landed; in dev/ once moved. Both are walked so the tests keep running.
    found = sorted(
        p for folder in ("staged/cline", "dev/cline") for p in (CORPUS / folder).glob("*") if (p / API).is_file() or (p / UI).is_file()
    )
    if not found:
        pytest.skip("no Cline tasks in the corpus")
    return found


def _file(task: Path) -> Path:
    return task / UI if (task / UI).is_file() else task / API


def independent_usage(task: Path) -> list[tuple[int, int, int, int] | None]:
    """(fresh input, cache read, cache write, output) per model call, read as ExtensionMessage.ts documents the
    files, without the reader: with ui_messages.json, each say "api_req_started" whose text is ClineApiReqInfo
    (tokensIn fresh, cacheWrites, cacheReads; a provider reporting tokensIn 0 throughout puts its cache miss in
    cacheWrites: fresh input then; a cancelled call with every figure 0 reported nothing); without it, each
    assistant message's metrics.tokens (metrics.ts: prompt the whole input, cached its cached part; on Anthropic's
    path prompt is the fresh part)."""
    if (task / UI).is_file():
        ui = json.loads((task / UI).read_text())
        said = [m for m in ui if m.get("type") == "say" and m.get("say") == "api_req_started"]
        infos = [json.loads(m["text"]) for m in said]
        models = [(m.get("modelInfo") or {}).get("modelId") for m in said]
        providers = {m["modelInfo"]["providerId"] for m in ui if "modelInfo" in m}
        folded = providers == {"deepseek"} or (
            not providers and all(i.get("tokensIn", 0) == 0 for i in infos) and any(i.get("cacheWrites", 0) for i in infos)
        )
        out: list[tuple[int, int, int, int] | None] = []
        for i, model in zip(infos, models):
            if i.get("cancelReason") and not any(i.get(k) for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads")):
                out.append(None)  # a call that failed before it streamed reports nothing: Cline's zeros
                continue
            fresh, writes, reads, tokens_out = (i.get(k, 0) for k in ("tokensIn", "cacheWrites", "cacheReads", "tokensOut"))
            if not folded and not writes and fresh and _billed_as_writes(model, i.get("cost"), fresh, reads, tokens_out):
                out.append((0, reads, fresh, tokens_out))  # Cline's own provider: Anthropic's cache writes as tokensIn
                continue
            out.append((fresh + writes, reads, 0, tokens_out) if folded else (fresh, reads, writes, tokens_out))
        return out
    api = json.loads((task / API).read_text())
    out2: list[tuple[int, int, int, int] | None] = []
    for m in api:
        if m["role"] != "assistant":
            continue
        t = m["metrics"]["tokens"]
        if m["modelInfo"]["providerId"] == "anthropic":
            out2.append((t["prompt"], t["cached"], 0, t["completion"]))
        else:
            out2.append((t["prompt"] - t["cached"], t["cached"], 0, t["completion"]))
    return out2


# Anthropic's list prices, USD per million tokens (input, cache write 5 min, cache read, output), written here apart
# from foldscope's price sources so the check is independent of them.
LIST_PRICES = {"anthropic/claude-sonnet-4.5": (3.0, 3.75, 0.30, 15.0)}


def _billed_as_writes(model: str | None, cost: object, fresh: int, reads: int, tokens_out: int) -> bool:
    """Whether the cost Cline recorded is what the request's tokensIn cost as cache writes (within 1%), nearer than as
    fresh input."""
    if model not in LIST_PRICES or not isinstance(cost, (int, float)) or cost <= 0:
        return False
    fresh_price, write, read, out = LIST_PRICES[model]
    rest = reads * read + tokens_out * out
    as_write, as_input = (fresh * write + rest) / 1e6, (fresh * fresh_price + rest) / 1e6
    return abs(as_write - cost) <= 0.01 * cost and abs(as_write - cost) < abs(as_input - cost)


def test_a_request_cline_billed_at_the_cache_write_price_reads_its_tokens_in_as_cache_writes(tmp_path):
    # Cline's own provider passes Anthropic's cache writes on as tokensIn (cacheWrites 0); the recorded cost says so. A
    # cost that fresh input explains, no cost, or a model without a price leave tokensIn as fresh input.
    sonnet = {"modelId": "anthropic/claude-sonnet-4.5", "providerId": "cline", "mode": "act"}
    cases = [
        (0.1999575, sonnet, (0, 0, 50868)),  # 50,868 x $3.75/M + 614 x $15/M: the real fineye task's request
        (0.16181, sonnet, (50868, 0, 0)),  # the same at $3/M: fresh input
        (0, sonnet, (50868, 0, 0)),
        (0.1999575, {**sonnet, "modelId": "no-such-model"}, (50868, 0, 0)),
    ]
    for n, (cost, info, expected) in enumerate(cases):
        api = [_user("Task."), dict(_assistant("One."), modelInfo=info)]
        ui = [_req(1001, 50868, 614, 0, 0, modelInfo=info)]
        ui[-1]["text"] = json.dumps({**json.loads(ui[-1]["text"]), "cost": cost})
        (usage,) = [r.usage for r in load_session(_task(tmp_path / f"t{n}", api, ui)).trace]
        assert (usage.input, usage.cache_read, usage.cache_write, usage.output) == (*expected, 614), (cost, info)


def test_each_anthropic_request_of_the_real_cline_provider_task_prices_to_the_cost_cline_recorded():
    task = CORPUS / "staged/cline/fineye"
    if not (task / UI).is_file():
        pytest.skip(f"{task} not in the corpus")
    from foldscope.core.model.session_totals import request_cost

    ui = json.loads((task / UI).read_text())
    recorded = [json.loads(m["text"]).get("cost") for m in ui if m.get("type") == "say" and m.get("say") == "api_req_started"]
    session = load_session(task / UI)
    anthropic = [(r, cost) for r, cost in zip(session.trace, recorded) if (r.model or "").startswith("anthropic/")]
    assert len(anthropic) == 5
    for r, cost in anthropic:
        assert request_cost(r, session.model) == pytest.approx(cost, rel=1e-3), r.model
    total = sum(cost for _, cost in anthropic)
    assert sum(request_cost(r, session.model) or 0 for r, _ in anthropic) == pytest.approx(total, rel=1e-3)  # $0.4777


def _usages(session) -> list[tuple[int, int, int, int] | None]:
    return [(u.input, u.cache_read, u.cache_write, u.output) if u else None for u in (r.usage for r in session.trace)]


def test_each_api_req_started_is_one_request_with_the_usage_the_ui_recorded():
    for task in _tasks():
        path = _file(task)
        assert detect_format(path) == "cline", path
        session = load_session(path)
        check_session(session)
        expected = independent_usage(task)
        assert len(expected) > 0 and _usages(session) == expected, task


def test_the_request_count_is_the_number_of_model_calls_the_task_records():
    for task in _tasks():
        session = load_session(_file(task))
        if (task / UI).is_file():
            calls = sum(1 for m in json.loads((task / UI).read_text()) if m.get("say") == "api_req_started")
        else:
            calls = sum(1 for m in json.loads((task / API).read_text()) if m["role"] == "assistant")
        assert len(session.trace) == calls, task


def test_either_file_of_a_task_opens_the_same_task():
    both = [t for t in _tasks() if (t / API).is_file() and (t / UI).is_file()]
    if not both:
        pytest.skip("no Cline task with both files in the corpus")
    for task in both:
        a, b = load_session(task / API), load_session(task / UI)
        assert _usages(a) == _usages(b) and [m.text for m in a.record] == [m.text for m in b.record]
        assert not any("missing" in w for w in a.warnings + b.warnings)
        # The API history holds the messages sent: each request after the first sends the one before it whole.
        assert set(a.trace[0].view) < set(a.trace[1].view)


def test_a_task_with_one_of_its_two_files_opens_with_what_it_has_and_says_what_is_missing(tmp_path):
    both = [t for t in _tasks() if (t / API).is_file() and (t / UI).is_file()]
    if not both:
        pytest.skip("no Cline task with both files in the corpus")
    for name, missing in ((API, UI), (UI, API)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / name).write_bytes((both[0] / name).read_bytes())
        session = load_session(folder / name)
        assert len(session.trace) == 36 if "1769064454592" in str(both[0]) else len(session.trace) > 0
        assert any(f"{missing} is missing" in w for w in session.warnings), name
        assert all(r.usage is not None for r in session.trace)


def test_the_predicted_input_is_within_2_percent_of_the_reported_at_p90_on_tasks_with_both_files():
    both = [t for t in _tasks() if (t / API).is_file() and (t / UI).is_file()]
    if not both:
        pytest.skip("no Cline task with both files in the corpus")
    pool = Accuracy()
    for task in both:
        session = load_session(task / UI)
        pool.extend(accuracy(session, measure_trace(session, prefix=False)))
    print(f"cline: n={len(pool.predicted.values)} predicted p90 {pool.predicted.p90:.4f}, trivial p90 {pool.trivial.p90:.4f}")
    assert len(pool.predicted.values) > 10 and pool.predicted.p90 <= 0.02


def _say(ts, say, text=None, **fields):
    return {"ts": ts, "type": "say", "say": say, **({"text": text} if text is not None else {}), **fields}


def _req(ts, tokens_in, tokens_out, writes, reads, **fields):
    return _say(
        ts,
        "api_req_started",
        json.dumps(
            {"request": "...", "tokensIn": tokens_in, "tokensOut": tokens_out, "cacheWrites": writes, "cacheReads": reads, "cost": 0.01}
        ),
        **fields,
    )


def _user(text, **fields):
    return {"role": "user", "content": [{"type": "text", "text": text}], **fields}


def _assistant(text, **fields):
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "modelInfo": {"modelId": "claude-sonnet-4-5", "providerId": "anthropic", "mode": "act"},
        **fields,
    }


def _task(folder: Path, api: list, ui: list) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / API).write_text(json.dumps(api))
    (folder / UI).write_text(json.dumps(ui))
    return folder / UI


def _texts(session, request) -> list[str]:
    return [session.record.get(m).text for m in request.view]


# Roo Code's non-destructive condense, as RooCodeInc/Roo-Code @ cb836567 writes it: src/core/condense/index.ts
# (summarizeConversation tags every earlier message with condenseParent and appends the summary as a user message
# with isSummary and condenseId) and packages/types/src/message.ts (say "condense_context" with contextCondense).
ROO_CONDENSE_API = [
    _user("Read the README.", ts=1000),
    _assistant("It says hello.", ts=2000),
    _user("Now the tests.", ts=3000),
    _assistant("Three tests.", ts=4000),
    _user("## Conversation Summary\nREADME read, tests counted.", ts=4001, isSummary=True, condenseId="c-1"),
    _user("Thanks.", ts=6000),
    _assistant("Welcome.", ts=7000),
]


def _roo_condense(api: list) -> list:
    tagged = [dict(m, condenseParent="c-1") if i < 4 else m for i, m in enumerate(api)]
    return tagged


ROO_CONDENSE_UI = [
    _say(900, "text", "Read the README."),
    _req(1001, 10, 5, 3000, 0),
    _say(2000, "text", "It says hello."),
    _req(3001, 10, 5, 200, 3000),
    _say(4000, "text", "Three tests."),
    _say(
        4001,
        "condense_context",
        contextCondense={
            "cost": 0.02,
            "prevContextTokens": 3215,
            "newContextTokens": 900,
            "summary": "README read, tests counted.",
            "condenseId": "c-1",
        },
    ),
    _req(6001, 10, 5, 950, 0),
    _say(7000, "text", "Welcome."),
]


def test_a_roo_condense_is_a_compaction_from_its_sizes_leaving_the_tagged_messages_out(tmp_path, capsys):
    path = _task(tmp_path / "roo", _roo_condense(ROO_CONDENSE_API), ROO_CONDENSE_UI)
    session = load_session(path)
    check_session(session)
    assert len(session.trace) == 3
    assert _texts(session, session.trace[2]) == ["README read, tests counted.", "Thanks."]
    assert _texts(session, session.trace[1])[:2] == ["Read the README.", "It says hello."]
    assert main(["compactions", str(path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["compactions"]
    assert (row["before"], row["after"]) == (3215, 900)


# Roo Code's sliding window, as src/core/context-management/index.ts writes it (truncateConversation: the messages
# after the first are tagged with truncationParent and a user marker with isTruncationMarker follows them) and
# message.ts's say "sliding_window_truncation" with contextTruncation.
ROO_TRUNCATION_API = [
    _user("Task.", ts=1000),
    dict(_assistant("One.", ts=2000), truncationParent="t-1"),
    dict(_user("More.", ts=3000), truncationParent="t-1"),
    {
        "role": "user",
        "content": "[Sliding window truncation: 2 messages hidden to reduce context]",
        "ts": 3500,
        "isTruncationMarker": True,
        "truncationId": "t-1",
    },
    _assistant("Two.", ts=4000),
    _user("Again.", ts=5000),
    _assistant("Three.", ts=6000),
]
ROO_TRUNCATION_UI = [
    _req(1001, 10, 5, 100, 0),
    _req(3001, 10, 5, 50, 100),
    _say(
        4500,
        "sliding_window_truncation",
        contextTruncation={"truncationId": "t-1", "messagesRemoved": 2, "prevContextTokens": 180000, "newContextTokens": 90000},
    ),
    _req(5001, 10, 5, 40, 60),
]


def test_a_roo_sliding_window_truncation_hides_its_tagged_messages_from_the_next_request_on(tmp_path, capsys):
    path = _task(tmp_path / "roo-t", ROO_TRUNCATION_API, ROO_TRUNCATION_UI)
    session = load_session(path)
    check_session(session)
    assert _texts(session, session.trace[1]) == ["Task.", "One.", "More."]
    assert _texts(session, session.trace[2]) == [
        "Task.",
        "[Sliding window truncation: 2 messages hidden to reduce context]",
        "Two.",
        "Again.",
    ]
    assert main(["compactions", str(path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["compactions"]
    assert (row["before"], row["after"]) == (180000, 90000)


# Cline's compaction divider (cline/cline @ 21cb8d25 : apps/vscode/src/sdk/message-translator.ts,
# buildCompactionMessage: say "compaction", text ClineCompactionInfo with status, mode and the sizes).
CLINE_COMPACTION_UI = [
    _req(1001, 10, 5, 100, 0),
    _req(3001, 10, 5, 50, 100),
    _say(3500, "compaction", json.dumps({"status": "started", "mode": "auto"})),
    _say(
        3500,
        "compaction",
        json.dumps(
            {"status": "completed", "mode": "auto", "tokensBefore": 150000, "tokensAfter": 20000, "messagesBefore": 5, "messagesAfter": 3}
        ),
    ),
    _req(5001, 10, 5, 40, 60),
]


def test_a_cline_compaction_divider_is_one_compaction_with_its_sizes(tmp_path, capsys):
    api = [_user("Task."), _assistant("One."), _user("More."), _assistant("Two."), _user("Again."), _assistant("Three.")]
    path = _task(tmp_path / "cline-c", api, CLINE_COMPACTION_UI)
    session = load_session(path)
    check_session(session)
    assert len(session.trace) == 3
    assert _texts(session, session.trace[2])[1:] == ["Two.", "Again."]  # the summary, then the last message kept
    assert main(["compactions", str(path), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["compactions"]
    assert (row["before"], row["after"]) == (150000, 20000)


def test_a_deleted_history_range_leaves_those_api_messages_out_of_later_requests(tmp_path):
    # ExtensionMessage.ts: conversationHistoryDeletedRange, "for when conversation history is truncated for API
    # requests"; legacy-task-handling.ts: the first pair is kept and start..end are left out.
    api = [_user("Task."), _assistant("One."), _user("More."), _assistant("Two."), _user("Again."), _assistant("Three.")]
    ui = [_req(1001, 10, 5, 100, 0), _req(3001, 10, 5, 50, 100), _req(5001, 10, 5, 40, 60, conversationHistoryDeletedRange=[2, 3])]
    session = load_session(_task(tmp_path / "cline-r", api, ui))
    check_session(session)
    texts = _texts(session, session.trace[2])
    assert "More." not in texts and "Two." not in texts and texts[:2] == ["Task.", "One."] and texts[-1] == "Again."
    (event,) = [e for e in session.events if e["kind"] == "compaction"]
    assert (event["messages_before"], event["messages_after"]) == (5, 3)


def test_a_provider_reporting_everything_as_cache_fields_is_read_as_fresh_input_and_reads(tmp_path):
    # DeepSeek's handler reports the cache miss as cacheWrites with tokensIn 0 (the mcp-vscode-server task's shape).
    api = [_user("Task."), dict(_assistant("One."), modelInfo={"modelId": "deepseek-chat", "providerId": "deepseek", "mode": "act"})]
    ui = [_req(1001, 0, 5, 11145, 512, modelInfo={"modelId": "deepseek-chat", "providerId": "deepseek", "mode": "act"})]
    (usage,) = [r.usage for r in load_session(_task(tmp_path / "ds", api, ui)).trace]
    assert (usage.input, usage.cache_read, usage.cache_write) == (11145, 512, 0)


def test_sessions_finds_cline_roo_and_kilo_tasks_in_each_editor_s_global_storage(tmp_path):
    home = tmp_path / "home"
    api = [_user("Task.\n# Current Working Directory (/work/cline-project) Files\n"), _assistant("One.")]
    ui = [_req(1001, 10, 5, 100, 0)]
    places = [
        home / ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1",
        home / "Library/Application Support/Cursor/User/globalStorage/rooveterinaryinc.roo-cline/tasks/2",
        home / ".config/VSCodium/User/globalStorage/kilocode.kilo-code/tasks/3",
    ]
    for place in places:
        _task(place, api, ui)
    rows = sorted((f.path, f.project, f.requests, f.model, f.problem) for f in find_sessions({}, home) if f.agent == "cline")
    assert rows == sorted((str(p / UI), "/work/cline-project", 1, "claude-sonnet-4-5", None) for p in places)
    moved = tmp_path / "appdata"
    _task(moved / "Windsurf/User/globalStorage/saoudrizwan.claude-dev/tasks/4", api, ui)
    assert [f.path for f in find_sessions({"VSCODE_APPDATA": str(moved)}, home) if f.agent == "cline"] == [
        str(moved / "Windsurf/User/globalStorage/saoudrizwan.claude-dev/tasks/4" / UI)
    ]


@pytest.mark.parametrize("command", ["inspect", "requests", "composition", "cache", "compactions", "replay"])
def test_every_command_reads_each_cline_task(command, capsys):
    for task in _tasks():
        assert main([command, str(_file(task)), "--json"]) == 0, (command, task)
        assert json.loads(capsys.readouterr().out)


def test_a_claude_code_file_is_not_taken_for_cline(corpus_dev):
    for path in sorted((corpus_dev / "claude_code").glob("*.jsonl")):
        assert detect_format(path) == "claude_code", path


def test_the_task_folder_opens_as_its_files_do_and_every_command_reads_it(capsys):
    for task in _tasks():
        assert detect_format(task) == "cline", task
        assert _usages(load_session(task)) == _usages(load_session(_file(task)))
        assert main(["requests", str(task), "--json"]) == 0, task
        assert json.loads(capsys.readouterr().out)


def test_a_folder_that_is_no_task_is_still_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "notes.json").write_text("[]")
    assert main(["inspect", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "is a folder, not a session file" in err and len(err.splitlines()) == 1


def test_a_task_reopens_from_the_library_unread_until_its_other_file_changes(tmp_path):
    api = [_user("Task."), _assistant("One."), _user("More."), _assistant("Two.")]
    path = _task(tmp_path / "t", api, [_req(1001, 10, 5, 100, 0), _req(3001, 10, 5, 50, 100)])
    db = str(tmp_path / "library.db")
    for opened in (path, path.parent):
        open_document(opened, db)
        assert open_document(opened, db).counter.tokenised_chars == 0, opened
    history = path.parent / API
    stat = history.stat()
    # The same size, a later time (the library tells a companion's change by its size and time, as a subagent's).
    history.write_bytes(history.read_bytes().replace(b"Two.", b"Six."))
    os.utime(history, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    for opened in (path, path.parent):
        again = open_document(opened, db)
        assert "Six." in [m.text for m in again.session.record], opened


# Cline's native tool calls whose results it wrote as text: cline/cline @ v3.51.0 src/core/task/tools/utils/
# ToolResultUtils.ts (pushToolResult: "<description> Result:\n<text>", a text block when no tool_use id is found)
# and ContextManager.ts (ensureToolResultsFollowToolUse sends "result missing" for a call still unanswered).
def _calls(*calls):
    blocks = [{"type": "text", "text": "Reading."}]
    blocks += [{"type": "tool_use", "id": call, "name": name, "input": {"path": path}} for call, name, path in calls]
    return {"role": "assistant", "content": blocks, "modelInfo": {"modelId": "claude-opus-4-5", "providerId": "anthropic"}}


def _texts_of(*texts):
    return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}


NATIVE_API = [
    _user("<task>\nRead a.py and b.py.\n</task>"),
    _calls(("toolu_1", "read_file", "a.py"), ("toolu_2", "read_file", "b.py"), ("toolu_3", "list_files", ".")),
    _texts_of(
        "[read_file for 'a.py'] Result:\nprint('a')",
        "Tool [read_file] was not executed because a tool has already been used in this message.",
        "<environment_details>\n# Current Time\nnow\n</environment_details>",
    ),
    _assistant("Done."),
]


def test_a_native_calls_result_written_as_text_is_that_calls_result_and_an_unanswered_call_is_sent_as_result_missing(tmp_path):
    path = _task(tmp_path / "t", NATIVE_API, [_req(1, 10, 5, 0, 0), _req(2, 10, 5, 0, 0)])
    session = load_session(path)
    check_session(session)
    results = {m.metadata["call_id"]: m.text for m in session.record if m.kind == "action_response"}
    assert results == {
        "toolu_1": "[read_file for 'a.py'] Result:\nprint('a')",
        "toolu_2": "Tool [read_file] was not executed because a tool has already been used in this message.",
        "toolu_3": "result missing",
    }
    instructions = [m.text for m in session.record if m.kind == "instruction"]
    assert instructions == ["<task>\nRead a.py and b.py.\n</task>", "<environment_details>\n# Current Time\nnow\n</environment_details>"]
    last = [session.record.get(m).kind for m in session.trace[1].view]
    assert last.count("action_request") == 3 and last.count("action_response") == 3


def test_a_result_text_after_an_answer_without_tool_use_blocks_stays_an_instruction(tmp_path):
    # Before native tool calls (the mra04242026 task): the call is XML in the assistant's text, the result a text.
    api = [
        _user("Read a.py."),
        _assistant("<read_file><path>a.py</path></read_file>"),
        _texts_of("[read_file for 'a.py'] Result:\nx"),
        _assistant("Ok."),
    ]
    session = load_session(_task(tmp_path / "t", api, [_req(1, 10, 5, 0, 0), _req(2, 10, 5, 0, 0)]))
    assert [m.kind for m in session.record if m.kind.startswith("action")] == []
    assert "[read_file for 'a.py'] Result:\nx" in [m.text for m in session.record if m.kind == "instruction"]


def test_every_call_of_the_real_native_task_is_sent_with_its_result_so_the_record_and_inspect_agree(capsys):
    task = CORPUS / "staged/cline/1769064454592"
    if not (task / API).is_file():
        pytest.skip("the Cline 3.51 task is not in the corpus")
    api = json.loads((task / API).read_text())
    last = max(i for i, m in enumerate(api) if m["role"] == "assistant")
    calls_sent = sum(1 for m in api[:last] if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use")
    assert main(["composition", str(task / API), "--json"]) == 0
    parts = {p["name"]: p for p in json.loads(capsys.readouterr().out)["parts"]}
    assert parts["tool calls"]["blocks"] == calls_sent == 37
    assert main(["view", str(task / API), "--record", "--json"]) == 0
    rows = sum(r["tokens"] for r in json.loads(capsys.readouterr().out)["rows"])
    assert main(["inspect", str(task / API), "--json"]) == 0
    inspected = json.loads(capsys.readouterr().out)
    # The rows leave out the JSON framing inspect's compiled count holds: within 2% (it was 43,386 against 64,782).
    assert abs(inspected["record_size"]["tokens"] - rows) <= 0.02 * rows
    print(f"scale {inspected['view_size']['scale']}")
    assert inspected["view_size"]["scale"] < 1.2  # 1.676 while the calls were dropped


# Roo Code and Kilo Code write a native call's result as a tool_result block under the call's id
# (RooCodeInc/Roo-Code @ cb836567 and Kilo-Org/kilocode @ 0fc86cec: src/core/assistant-message/
# presentAssistantMessage.ts, pushToolResult; sanitizeToolUseId applied to the tool_use id and the result's alike).
def test_a_roo_or_kilo_tool_result_block_answers_its_call_and_no_text_after_it_is_taken_for_a_second_result(tmp_path):
    api = [
        _user("<task>\nRead a.py and b.py.\n</task>"),
        _calls(("toolu_a", "read_file", "a.py"), ("toolu_b", "read_file", "b.py")),
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "print('a')"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "content": "Skipping tool [read_file for 'b.py'] due to user rejecting a previous tool.",
                    "is_error": True,
                },
                {"type": "text", "text": "[read_file for 'a.py'] Result:\nan instruction that quotes a result"},
            ],
        },
        _assistant("Done."),
    ]
    session = load_session(_task(tmp_path / "t", api, [_req(1, 10, 5, 0, 0), _req(2, 10, 5, 0, 0)]))
    check_session(session)
    results = {m.metadata["call_id"]: m.text for m in session.record if m.kind == "action_response"}
    assert results == {"toolu_a": "print('a')", "toolu_b": "Skipping tool [read_file for 'b.py'] due to user rejecting a previous tool."}
    assert "[read_file for 'a.py'] Result:\nan instruction that quotes a result" in [
        m.text for m in session.record if m.kind == "instruction"
    ]


def test_a_task_of_both_files_is_one_session_to_the_folder_commands(tmp_path, capsys):
    # Either file reads the whole task: a tasks folder walked whole (usage, tune, replay DIR, cache DIR) read each
    # task twice, once by each file, and `usage` said 2 sessions and twice the bill for one task.
    tasks = tmp_path / "tasks"
    api = [_user("Read the README."), _assistant("It says hello.")]
    for name in ("1", "2"):
        _task(tasks / name, api, [_say(900, "text", "Read the README."), _req(1001, 10, 5, 300, 0)])
        (tasks / name / "task_metadata.json").write_text(json.dumps({"files_in_context": []}))
    assert main(["usage", str(tasks), "--json"]) == 0
    total = json.loads(capsys.readouterr().out)["total"]
    assert (total["sessions"], total["requests"], total["cache_write"]) == (2, 2, 600)
    for command in ("cache", "replay"):
        assert main([command, str(tasks), "--json", *(["--strategy", "recorded"] if command == "replay" else [])]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["sessions"] == 2, command
        assert sorted(row["file"] for row in out["table"]) == [str(tasks / n / UI) for n in ("1", "2")], command
        assert out["skipped"] == [], command  # task_metadata.json is the task's, not a file that failed
    assert main(["tune", str(tasks), "--strategy", "none", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"] == 2


def test_a_ui_only_task_names_each_call_by_the_tool_its_message_names(tmp_path):
    # review9: read from ui_messages.json alone, every call of the real fineye task was "call tool" (the message's
    # type), so the record and "By tool and target" could not tell a file read from an edit; Cline's ClineSayTool
    # names its tool (readFile, editedExistingFile), and a command is a command.
    folder = tmp_path / "task"
    folder.mkdir()
    ui = [
        _say(900, "text", "Read the README."),
        _req(1001, 10, 5, 300, 0),
        _say(1002, "tool", json.dumps({"tool": "readFile", "path": "README.md", "content": "/w/README.md"})),
        _say(1003, "command", "ls -la"),
        _req(1004, 20, 5, 0, 300),
        _say(1005, "text", "Done."),
    ]
    (folder / UI).write_text(json.dumps(ui))
    session = load_session(folder / UI)
    calls = [m for m in session.record if m.kind == "action_request"]
    assert [m.content["function"] for m in calls] == ["readFile", "command"]


def test_a_ui_only_task_reads_each_call_s_result_out_of_the_next_request_s_text_keeping_every_character():
    """review9: read from ui_messages.json alone, the results of the real fineye task's calls sat inside the next
    request's text ("[read_file for 'x'] Result: ..."), so Composition gave the request 91.7% "instructions". Each is
    now its call's result (the API history's markers, _TEXT_RESULT); what the request sent is all still there."""
    task = CORPUS / "staged/cline/fineye"
    if not (task / UI).exists():
        pytest.skip(f"{task} is absent")
    session = load_session(task / UI)
    by_id = {m.id: m for m in session.record}
    answered = {m.content["action_request_id"]: m.content["output"] for m in session.record if m.kind == "action_response"}
    reads = [m for m in session.record if m.kind == "action_request" and m.content["function"] == "readFile"]
    assert len(reads) == 13
    for call in reads:
        assert answered[call.id].startswith(f"[read_file for '{call.content['arguments']['path']}'] Result:\n"), call.id
    assert "content" not in reads[0].content["arguments"]  # the panel's absolute path, not what the model wrote
    ui = json.loads((task / UI).read_text())
    for n, m in enumerate(ui, 1):
        if m.get("say") == "api_req_started":
            sent = json.loads(m["text"])["request"]
            parts = [by_id[i].content["output"] for i in by_id if i.startswith(f"ui{n}-result")]
            parts += [by_id[f"ui{n}-request"].content["instruction"]] if f"ui{n}-request" in by_id else []
            assert "\n\n".join(parts) == sent, n


def test_a_request_s_text_gives_a_result_to_each_call_before_it_and_no_more():
    from foldscope.core.formats.cline_ui import split_results

    env = "\n\n<environment_details>\n# Current Mode\nACT MODE\n</environment_details>"
    read = "[read_file for 'a.md'] Result:\nline\n[x] Result: a line of the file, not a block\n\n\nlast line\n"
    text = read + "\n\n[list_files for '.'] Result:\na.md" + env
    assert split_results(text, 0) == ([], text)
    assert split_results(text, 1) == ([read], "[list_files for '.'] Result:\na.md" + env)  # one call: one result
    assert split_results(text, 2) == ([read, "[list_files for '.'] Result:\na.md"], env[2:])
    assert split_results(text, 3) == split_results(text, 2)
    results, rest = split_results("[attempt_completion] Result: Done\n\n<feedback>\nmore\n</feedback>" + env, 1)
    assert results == ["[attempt_completion] Result: Done\n\n<feedback>\nmore\n</feedback>"] and rest == env[2:]
