"""The native format: lionagi Branch reading, writing, round trips and bad input."""

import copy
import json
from pathlib import Path

import pytest

from foldscope.core.formats import detect_format, load_session
from foldscope.core.formats.lionagi import native_dict, write_session
from foldscope.core.model.session import Message, ReadError
from tests.paths import CORPUS_DEV

CORPUS_LIONAGI = CORPUS_DEV / "lionagi"
CORPUS_BRANCHES = sorted(p.name for p in CORPUS_LIONAGI.glob("*.json") if "manifest" not in p.name) or ["absent"]
CLASS = "lionagi.protocols.messages."


def _message(mid, lion, content, **metadata):
    return {
        "id": mid,
        "created_at": 1.0,
        "metadata": {"lion_class": CLASS + lion, **metadata},
        "content": content,
        "role": "user",
        "unknown_key": [1, {"x": None}],
    }


def small_branch(view=None, progression=True):
    """A current-shape Branch with one message of each class, and keys foldscope does not know."""
    messages = [
        _message("s", "system.System", {"system_message": "be careful"}),
        _message("i", "instruction.Instruction", {"instruction": "do it", "guidance": "g"}),
        _message("a", "assistant_response.AssistantResponse", {"assistant_response": "reading"}),
        _message("q", "action_request.ActionRequest", {"function": "reader", "arguments": {"path": "x.py"}, "action_response_id": "r"}),
        _message(
            "r",
            "action_response.ActionResponse",
            {"function": "reader", "arguments": {"path": "x.py"}, "output": {"content": "x = 1"}, "action_request_id": "q"},
        ),
        _message("n", "assistant_response.AssistantResponse", {"assistant_response": "summary"}, context_first_index=3),
    ]
    pile = {"id": "pile", "created_at": 1.0, "metadata": {"lion_class": "Pile"}, "collections": messages, "strict_type": False}
    if progression:
        pile["progression"] = {"id": "p", "created_at": 1.0, "metadata": {}, "order": [m["id"] for m in messages], "name": None}
    metadata = {"lion_class": "lionagi.session.branch.Branch", "future_key": {"kept": True}}
    if view is not None:
        metadata["current_progression"] = {"id": "v", "created_at": 1.0, "metadata": {}, "order": view, "name": None}
    return {
        "id": "b",
        "created_at": 1.0,
        "metadata": metadata,
        "user": None,
        "name": "t",
        "messages": pile,
        "chat_model": {"endpoint": {"config": {"kwargs": {"model": "m-1"}}}},
    }


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def round_trip(session, tmp_path: Path):
    out = tmp_path / "out.json"
    write_session(session, out)
    return load_session(out), json.loads(out.read_text(encoding="utf-8"))


# Round trips ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CORPUS_BRANCHES)
def test_corpus_branch_round_trip_is_equal_json(corpus_dev, name, tmp_path):
    path = corpus_dev / "lionagi" / name
    original = json.loads(path.read_text(encoding="utf-8"))
    session = load_session(path)
    again, written = round_trip(session, tmp_path)
    assert written["branch"] == original  # every key, unknown ones included
    assert native_dict(again) == written
    assert again.view == session.view and again.record.ids() == session.record.ids()


def test_demo_round_trip_is_equal_json(tmp_path):
    from foldscope.core.formats.demo import demo_path

    session = load_session(demo_path())
    again, written = round_trip(session, tmp_path)
    assert written == json.loads(demo_path().read_text(encoding="utf-8"))
    assert native_dict(again) == written


def test_manifest_beside_a_bare_branch_is_read_and_written_into_the_wrapper(corpus_dev, tmp_path):
    path = corpus_dev / "lionagi" / "branch_v0.36.0_after_context_fold.synthetic.json"
    manifest = json.loads((corpus_dev / "lionagi" / "run_manifest_v0.36.0_context_folds.synthetic.json").read_text())
    session = load_session(path)
    assert session.manifest == manifest
    assert [m.kind for m in session.record].count("note") == 4  # 0.36.0 notes, known by their prefix
    again, written = round_trip(session, tmp_path)
    assert written["manifest"] == manifest and again.manifest == manifest


def test_a_run_manifest_alone_is_refused_with_what_it_is(corpus_dev):
    with pytest.raises(ReadError, match="run manifest"):
        load_session(corpus_dev / "lionagi" / "run_manifest_v0.36.0_context_folds.synthetic.json")


def test_old_shape_without_progression_reads_in_collection_order(tmp_path):
    branch = small_branch(progression=False)
    session = load_session(write_json(tmp_path / "b.json", branch))
    assert session.record.ids() == ["s", "i", "a", "q", "r", "n"]
    assert session.view == session.record.ids()  # no current_progression: the whole record
    _, written = round_trip(session, tmp_path)
    assert written["branch"] == branch and "progression" not in written["branch"]["messages"]


def test_kinds_notes_and_raw_are_mapped(tmp_path):
    session = load_session(write_json(tmp_path / "b.json", small_branch(view=["s", "i", "n", "r"])))
    assert [m.kind for m in session.record] == ["system", "instruction", "assistant", "action_request", "action_response", "note"]
    assert session.view == ["s", "i", "n", "r"]
    assert session.record.get("r").content["output"] == {"content": "x = 1"}
    assert session.record.get("q").raw["unknown_key"] == [1, {"x": None}]
    assert "messages" not in session.branch and session.branch["metadata"]["future_key"] == {"kept": True}
    assert session.record.get("s").provenance.path == "$.messages.collections[0]"
    assert session.model == "m-1"


def test_wrapper_keeps_unknown_keys_and_events(tmp_path):
    wrapper = {"branch": small_branch(), "manifest": {"api_usage": []}, "events": [{"kind": "restore"}], "later_key": 5}
    session = load_session(write_json(tmp_path / "w.json", wrapper))
    assert session.events == [{"kind": "restore"}]
    _, written = round_trip(session, tmp_path)
    assert written == wrapper


def test_messages_foldscope_created_are_written_as_lionagi_dicts(tmp_path):
    session = load_session(write_json(tmp_path / "b.json", small_branch()))
    copy_message = Message(
        "c", "action_response", 2.0, {"function": "reader", "arguments": {"path": "x.py"}, "output": "x = [clipped]"}, {"clipped_from": "r"}
    )
    note = Message("n2", "note", 3.0, {"assistant_response": "folded 2"})
    session.record.append(copy_message)
    session.record.append(note)
    session.set_view(["s", "i", "n2", "c"])
    again, written = round_trip(session, tmp_path)
    stored = written["branch"]["messages"]["collections"][-2]
    assert stored["metadata"] == {"lion_class": CLASS + "action_response.ActionResponse", "clipped_from": "r"}
    assert stored["role"] == "action"
    assert again.record.get("c").is_clipped_copy and again.record.get("n2").kind == "note"
    assert again.view == ["s", "i", "n2", "c"]
    assert written["branch"]["messages"]["progression"]["order"][-2:] == ["c", "n2"]


def test_a_changed_view_on_an_old_shape_gains_a_current_progression(tmp_path):
    session = load_session(write_json(tmp_path / "b.json", small_branch(progression=False)))
    session.set_view(["s", "i", "r"])
    again, written = round_trip(session, tmp_path)
    assert written["branch"]["metadata"]["current_progression"]["order"] == ["s", "i", "r"]
    assert again.view == ["s", "i", "r"]


def test_usage_comes_from_the_manifest_by_response_id(tmp_path):
    usage = {"response_id": "a", "input_tokens": 5, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20, "output_tokens": 7}
    session = load_session(write_json(tmp_path / "w.json", {"branch": small_branch(), "manifest": {"api_usage": [usage]}}))
    assert len(session.trace) == 1  # one assistant response; the note is not a request
    request = session.trace[0]
    assert request.response_id == "a" and request.view == ("s", "i")
    assert request.usage.reported_input == 125 and request.usage.output == 7


def test_usage_comes_from_an_old_dump_model_response(corpus_dev):
    session = load_session(corpus_dev / "lionagi" / "cookbook_002_comedian.branch.json")
    assert [r.usage.reported_input for r in session.trace] == [44, 120, 383, 532, 612]


# Bad input -------------------------------------------------------------------------------------


def _bad(tmp_path, data, text=None):
    path = tmp_path / "bad.json"
    if text is not None:
        path.write_bytes(text)
    else:
        write_json(path, data)
    with pytest.raises(ReadError) as caught:
        load_session(path, "lionagi")
    assert caught.value.file == str(path)
    return caught.value


def _mutated(change):
    branch = small_branch(view=["s", "i"])
    change(branch)
    return branch


def test_not_json_names_the_line(tmp_path):
    error = _bad(tmp_path, None, b'{"messages": {\n  "collections": [,]}}')
    assert error.place == "line 2 column 19" and "not JSON" in error.problem


def test_not_utf8_is_refused(tmp_path):
    assert _bad(tmp_path, None, b'{"messages": "\xff"}').problem == "not UTF-8 text"


def test_top_level_must_be_an_object(tmp_path):
    assert _bad(tmp_path, [1, 2]).place == "$"


def test_order_naming_a_missing_message(tmp_path):
    error = _bad(tmp_path, _mutated(lambda b: b["messages"]["progression"]["order"].__setitem__(2, "ghost")))
    assert error.place == "$.messages.progression.order[2]" and "'ghost'" in error.problem


def test_a_message_missing_from_the_order(tmp_path):
    error = _bad(tmp_path, _mutated(lambda b: b["messages"]["progression"]["order"].pop()))
    assert error.place == "$.messages.progression.order" and "'n'" in error.problem


def test_unknown_lion_class(tmp_path):
    def change(b):
        b["messages"]["collections"][3]["metadata"]["lion_class"] = "lionagi.Mystery"

    error = _bad(tmp_path, _mutated(change))
    assert error.place == "$.messages.collections[3].metadata.lion_class"
    assert "unknown message class" in error.problem


def test_view_naming_an_id_outside_the_record(tmp_path):
    error = _bad(tmp_path, _mutated(lambda b: b["metadata"]["current_progression"]["order"].append("zz")))
    assert error.place == "$.metadata.current_progression.order[2]" and "full record" in error.problem


def test_view_naming_an_id_twice(tmp_path):
    error = _bad(tmp_path, _mutated(lambda b: b["metadata"]["current_progression"]["order"].append("s")))
    assert "twice" in error.problem


def test_duplicate_message_ids(tmp_path):
    def change(b):
        b["messages"]["collections"].append(copy.deepcopy(b["messages"]["collections"][0]))

    error = _bad(tmp_path, _mutated(change))
    assert error.place == "$.messages.collections[6].id" and "duplicate" in error.problem


@pytest.mark.parametrize(
    "place, value, expected",
    [
        ("content", ["not", "a", "dict"], "$.messages.collections[1].content"),
        ("created_at", "yesterday", "$.messages.collections[1].created_at"),
        ("id", 42, "$.messages.collections[1].id"),
        ("metadata", "x", "$.messages.collections[1].metadata"),
    ],
)
def test_wrong_types_in_a_message(tmp_path, place, value, expected):
    error = _bad(tmp_path, _mutated(lambda b: b["messages"]["collections"][1].__setitem__(place, value)))
    assert error.place == expected and "expected" in error.problem


def test_wrong_type_of_arguments(tmp_path):
    def change(b):
        b["messages"]["collections"][3]["content"]["arguments"] = "path=x.py"

    assert _bad(tmp_path, _mutated(change)).place == "$.messages.collections[3].content.arguments"


def test_wrong_type_of_collections_and_manifest(tmp_path):
    assert _bad(tmp_path, _mutated(lambda b: b["messages"].__setitem__("collections", {}))).place == "$.messages.collections"
    error = _bad(tmp_path, {"branch": small_branch(), "manifest": [1]})
    assert error.place == "$.manifest"


def test_errors_inside_the_wrapper_name_the_wrapped_path(tmp_path):
    branch = small_branch()
    branch["messages"]["collections"][0]["metadata"]["lion_class"] = 7
    assert _bad(tmp_path, {"branch": branch}).place == "$.branch.messages.collections[0].metadata.lion_class"


def test_unrecognised_files_are_refused_by_the_registry(tmp_path):
    for name, data in [("empty.json", b""), ("text.txt", b"hello"), ("list.json", b"[1, 2]")]:
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(ReadError):
            load_session(path)
    with pytest.raises(ReadError, match="cannot read"):
        load_session(tmp_path / "missing.json")
    with pytest.raises(ReadError, match="unknown format"):
        load_session(write_json(tmp_path / "b.json", small_branch()), "no-such-format")


def test_detection_is_by_content_not_name(tmp_path):
    assert detect_format(write_json(tmp_path / "session.jsonl", small_branch())) == "lionagi"
    assert detect_format(write_json(tmp_path / "w.txt", {"branch": small_branch()})) == "lionagi"


def test_a_json_lines_session_quoting_a_lionagi_class_is_not_taken_for_a_branch(tmp_path):
    # Found by review7: "lionagi. anywhere in the head claimed the file, so a Claude Code session whose first lines
    # quote a Branch's JSON (a lionagi user asking about one) was read as a Branch and refused ("line 2 column 1: not
    # JSON: extra data"). JSON lines, two whole values on their own lines, are never one Branch dump.
    quoted = 'Why does this fail?\n{"lion_class": "lionagi.protocols.messages.instruction.Instruction"}'
    lines = [
        {
            "type": "user",
            "uuid": "u0",
            "parentUuid": None,
            "sessionId": "s",
            "timestamp": "2026-12-01T10:00:00Z",
            "message": {"role": "user", "content": quoted},
        },
        {
            "type": "assistant",
            "uuid": "a0",
            "parentUuid": "u0",
            "sessionId": "s",
            "requestId": "r0",
            "timestamp": "2026-12-01T10:00:30Z",
            "message": {
                "id": "m0",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "ok"}],
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert b'"lionagi.' in path.read_bytes()  # the marker the Branch's sniff looks for is there, inside a text
    assert detect_format(path) == "claude_code"
    assert quoted in load_session(path).record[0].text
    # A Branch dumped on one line, ending in a newline or not, is still one
    for end in ("\n", ""):
        compact = tmp_path / f"compact{len(end)}.json"
        compact.write_text(json.dumps(small_branch()) + end)
        assert detect_format(compact) == "lionagi"


def test_a_broken_json_file_is_refused_with_its_line_and_column(tmp_path):
    from foldscope.core.formats import load_session

    path = tmp_path / "broken.json"
    path.write_text('{"id": "x",\n  "messages": [1, 2,\n')
    with pytest.raises(ReadError) as err:
        load_session(path)
    assert str(err.value).startswith(f"{path}: line 3 column 1: not JSON")


def test_a_file_that_is_not_utf8_is_refused_naming_the_byte(tmp_path):
    from foldscope.core.formats import load_session

    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(ReadError) as err:
        load_session(path)
    assert str(err.value) == f"{path}: byte 13: not UTF-8 text"
