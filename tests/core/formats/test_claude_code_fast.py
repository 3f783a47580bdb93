"""The Claude Code reader's shortcuts against the rules they replace: a typed prompt on the main chain read straight
into the record (claude_code._Reader._typed_prompt) makes the session the general steps make, over random files of
prompts, answers, results, compactions, rewinds, sidechain lines, repeated and colliding ids and odd fields; and
stream_fields.parse_time's reuse of the last day read gives fromisoformat's time to the last bit."""

from __future__ import annotations

import json
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.formats import claude_code, stream_fields
from foldscope.core.model.session import Fields, Session

SECONDS = [
    "2026-01-01T00:00:00",
    "2026-01-01T00:00:01",
    "1969-12-31T23:59:59",
    "0001-01-01T00:00:00",
    "9999-12-31T23:59:59",
    "2026-02-29T00:00:00",
]
# A clock of the day, valid or not: fromisoformat refuses an hour, minute or second out of range, and a digit not ASCII.
CLOCKS = st.builds(
    lambda h, m, s, sep: f"{h}{sep[0]}{m}{sep[1]}{s}",
    st.one_of(st.integers(0, 23).map("{:02d}".format), st.sampled_from(["24", "99", "1a", " 1", "+1", "٣٣"])),
    st.one_of(st.integers(0, 59).map("{:02d}".format), st.sampled_from(["60", "-1"])),
    st.one_of(st.integers(0, 59).map("{:02d}".format), st.sampled_from(["60", "61"])),
    st.sampled_from(["::", "::", "::", ":-", "-:", "  "]),
)
TIMES = st.one_of(
    st.builds(lambda s, ms: f"{s}.{ms:03d}Z", st.sampled_from(SECONDS), st.integers(0, 999)),
    st.builds(lambda d, c, ms: f"{d[:11]}{c}.{ms:03d}Z", st.sampled_from(SECONDS), CLOCKS, st.integers(0, 999)),
    st.builds(lambda s, ms: f"{s}.{ms}Z", st.sampled_from(SECONDS), st.sampled_from(["1a2", " 12", "٣٣٣", "1.5", "+12"])),
    st.sampled_from(
        [
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00.123+00:00",
            "2026-01-01T00:00:00.123",
            "",
            "2026-01-01T00:00:00.1234Z",
            "2026-01-01 00:00:00.123Z",
            "Z" * 24,
            "2026-01-01T00:00:00.123z",
        ]
    ),
    st.integers(-10, 2 * 10**12),
    st.none(),
    st.booleans(),
)
SIDES = st.sampled_from(["main", "main", "main", "main", "side", "none"])


@st.composite
def _lines(draw) -> list[Any]:
    """A Claude Code file's lines, mostly typed prompts, with every condition the shortcut asks varied."""
    lines: list[Any] = []
    uuids: list[Any] = []
    tip: Any = None
    for n in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["prompt"] * 6 + ["assistant", "assistant", "result", "boundary", "summary", "list_prompt", "junk"]))
        uuid = draw(st.sampled_from(["fresh"] * 8 + ["repeat", "missing", "number", "collide"]))
        if uuid == "fresh" or not uuids:
            u: Any = f"u{n}"
        elif uuid == "repeat":
            u = draw(st.sampled_from(uuids))
        elif uuid == "collide":
            u = f"msg{draw(st.integers(0, 3))}"  # an answer's message id
        else:
            u = None if uuid == "missing" else n
        parent = draw(st.sampled_from(["tip"] * 6 + ["earlier", "null", "missing", "unknown", "number"]))
        line: dict[str, Any] = {"type": "user", "sessionId": "s", "timestamp": draw(TIMES)}
        if u is not None or draw(st.booleans()):
            line["uuid"] = u
        if parent != "missing":
            line["parentUuid"] = {
                "tip": tip,
                "earlier": draw(st.sampled_from(uuids)) if uuids else tip,
                "null": None,
                "unknown": "nowhere",
                "number": 7,
            }[parent]
        side = draw(SIDES)
        if side != "none":
            line["isSidechain"] = side == "side"
        for flag in ("isMeta", "isCompactSummary"):
            if draw(st.integers(0, 9)) == 0:
                line[flag] = draw(st.sampled_from([True, False, 1, "yes"]))
        if draw(st.integers(0, 19)) == 0:
            line["cwd"] = "/somewhere"
        if kind in ("prompt", "summary", "list_prompt"):
            content: Any = f"prompt {n}" if kind != "list_prompt" else [{"type": "text", "text": f"prompt {n}"}]
            if draw(st.integers(0, 15)) == 0:
                content = draw(st.sampled_from([None, 3, {"text": "x"}, ""]))
            message: Any = {"role": "user", "content": content}
            if draw(st.integers(0, 15)) == 0:
                message = draw(st.sampled_from([None, "text", ["x"], {}]))
            line["message"] = message
            if kind == "summary":
                line["isCompactSummary"] = True
        elif kind == "assistant":
            mid = f"msg{draw(st.integers(0, 3))}"
            blocks: list[Any] = [{"type": "text", "text": f"answer {n}"}]
            if draw(st.booleans()):
                blocks.append({"type": "tool_use", "id": f"call{n}", "name": "Read", "input": {"n": n}})
            line.update(
                type="assistant",
                message={
                    "role": "assistant",
                    "id": mid,
                    "model": "claude-sonnet-4-5",
                    "content": blocks,
                    "usage": {"input_tokens": n, "output_tokens": 1},
                },
            )
        elif kind == "result":
            calls = [
                x["message"]["content"][1]["id"]
                for x in lines
                if isinstance(x, dict) and x.get("type") == "assistant" and len(x["message"]["content"]) > 1
            ]
            call = draw(st.sampled_from(calls)) if calls else "call-none"
            line["message"] = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "ok"}]}
        elif kind == "boundary":
            line.update(
                type="system",
                subtype="compact_boundary",
                parentUuid=None,
                logicalParentUuid=tip,
                content="Conversation compacted",
                compactMetadata={"trigger": "auto", "preTokens": 9},
            )
        else:
            line = draw(st.sampled_from([[1, 2], "text", {"type": 5}, {"type": "progress", "uuid": f"p{n}"}]))
        lines.append(line)
        if isinstance(line, dict) and isinstance(line.get("uuid"), str):
            uuids.append(line["uuid"])
            tip = line["uuid"]
    return lines


def _facts(session: Session) -> dict[str, Any]:
    """Everything a reader makes, as plain values (Fields as dicts, the views as tuples)."""
    source = session.extras.get("source_lines")
    return {
        "record": [(m.id, m.kind, repr(m.created_at), dict(m.content), dict(m.metadata), m.provenance, m.raw) for m in session.record],
        "view": list(session.view),
        "trace": [
            (r.index, tuple(r.view), r.response_id, r.usage, repr(r.at), r.model, r.cache_miss_reason, r.unseen_input)
            for r in session.trace
        ],
        "events": session.events,
        "warnings": session.warnings,
        "model": session.model,
        "extras": {k: v for k, v in session.extras.items() if k != "source_lines"},
        "source": (list(source.starts), source.multi) if source is not None else None,
    }


def _read(path: Path) -> dict[str, Any] | str:
    try:
        return _facts(claude_code.read(path, children=False))
    except Exception as exc:  # noqa: BLE001  # the same refusal either way is part of the same behaviour
        return f"{type(exc).__name__}: {exc}"


@settings(max_examples=300, deadline=None)
@given(_lines())
def test_a_typed_prompt_read_straight_makes_the_session_the_general_steps_make(lines):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        fast = _read(path)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(claude_code._Reader, "_typed_prompt", lambda self, line, value: False)
            general = _read(path)
    assert fast == general


def test_the_shortcut_takes_the_typed_prompts_of_a_plain_file(tmp_path, monkeypatch):
    """Not a shortcut that never runs: every prompt after the first (whose parent is null) goes through it."""
    taken: list[int] = []
    original = claude_code._Reader._typed_prompt

    def spy(self, line, value):
        done = original(self, line, value)
        if done:
            taken.append(line)
        return done

    monkeypatch.setattr(claude_code._Reader, "_typed_prompt", spy)
    entries, parent = [], None
    for n in range(5):
        entries.append(
            {
                "type": "user",
                "uuid": f"u{n}",
                "parentUuid": parent,
                "sessionId": "s",
                "isSidechain": False,
                "timestamp": f"2026-01-01T00:00:00.00{n}Z",
                "message": {"role": "user", "content": f"w{n}"},
            }
        )
        parent = f"u{n}"
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in entries), encoding="utf-8")
    session = claude_code.read(path)
    assert taken == [2, 3, 4, 5]
    assert [m.content["instruction"] for m in session.record] == [f"w{n}" for n in range(5)]
    assert [m.created_at for m in session.record] == [
        datetime.fromisoformat(f"2026-01-01T00:00:00.00{n}+00:00").timestamp() for n in range(5)
    ]


@settings(max_examples=500, deadline=None)
@given(st.lists(TIMES, min_size=1, max_size=8))
def test_a_time_in_the_last_day_read_reads_as_fromisoformat_reads_it(times):
    stream_fields._last_day = stream_fields._last_minute = (None, None)  # a state of its own: no day read yet
    for value in times:
        assert repr(stream_fields.parse_time(value)) == repr(stream_fields._parse_time(value))


@pytest.mark.parametrize(
    "clock",
    [
        "23:59:59.999",
        "00:00:00.000",
        "12:34:56.789",
        "24:00:00.000",
        "23:60:00.000",
        "23:59:60.000",
        "1a:00:00.000",
        " 1:00:00.000",
        "+1:00:00.000",
        "٣٣:00:00.000",
        "٠١:00:00.000",
        "00:00:00x000",
        "00-00:00.000",
        "00:00-00.000",
        "00:00:00,000",
        "00:00:00.+12",
    ],
)
def test_a_clock_in_the_day_read_last_reads_as_fromisoformat_reads_it(clock):
    stream_fields._last_day = stream_fields._last_minute = (None, None)  # a state of its own: no day read yet
    for day in ("2026-01-01", "1969-12-31", "0001-01-01", "9999-12-31"):
        stream_fields.parse_time(f"{day}T08:00:00.000Z")  # the day read, so the clock is read from it
        value = f"{day}T{clock}Z"
        assert repr(stream_fields.parse_time(value)) == repr(stream_fields._parse_time(value))


@pytest.mark.parametrize(
    "second",
    [
        "59.999",
        "00.000",
        "34.567",
        "60.000",
        "61.000",
        "1a.000",
        " 1.000",
        "+1.000",
        "٣٣.000",
        "00x000",
        "00,000",
        "00.+12",
        "00.1a2",
        "00. 12",
    ],
)
def test_a_time_in_the_minute_read_last_reads_as_fromisoformat_reads_it(second):
    """A time whose first 17 characters (to its minute's colon) are the last time's read from its day is read from
    that minute (stream_fields._in_minute): its seconds and milliseconds as fromisoformat reads them, or refused."""
    stream_fields._last_day = stream_fields._last_minute = (None, None)  # a state of its own: no day read yet
    for minute in ("2026-01-01T00:00", "1969-12-31T23:59", "0001-01-01T00:00", "9999-12-31T23:59", "2026-02-28T12:34"):
        stream_fields.parse_time(f"{minute[:11]}08:00:00.000Z")  # the day read
        stream_fields.parse_time(f"{minute}:00.000Z")  # and the minute, from it
        assert stream_fields._last_minute[0] == f"{minute}:"
        value = f"{minute}:{second}Z"
        assert repr(stream_fields.parse_time(value)) == repr(stream_fields._parse_time(value))


def test_fields_one_is_the_fields_of_a_one_key_dict():
    made = Fields.one("uuid", "u1")
    assert made == Fields({"uuid": "u1"}) and dict(made) == {"uuid": "u1"} and made.sole("uuid") == "u1"
    assert made._keys is Fields({"uuid": "u2"})._keys  # one key tuple for every such mapping


@settings(max_examples=200, deadline=None)
@given(st.lists(TIMES, min_size=1, max_size=12))
def test_a_time_text_read_again_gives_the_same_float_object_and_value(times):
    stream_fields._last_day = stream_fields._last_minute = (None, None)  # a state of its own: no day read yet
    for value in times:
        first = stream_fields.parse_time(value)
        again = stream_fields.parse_time("".join(value) if isinstance(value, str) else value)  # an equal text, not the same object
        assert repr(first) == repr(stream_fields._parse_time(value)) == repr(again)
        if isinstance(value, str) and first is not None:
            assert again is first


def test_a_responses_messages_are_the_messages_the_dataclass_makes(tmp_path, monkeypatch):
    # SessionBuilder._turn_messages makes them through new_message's slots: the same record as a read whose every
    # message the frozen dataclass's constructor makes from the same arguments (review18: not from the messages' fields)
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[3] / "bench"))
    from fresh_session import generate

    from foldscope.core.formats import stream
    from foldscope.core.model.session import Message, Provenance

    path = tmp_path / "s.jsonl"
    generate(path, 80)
    record = claude_code.read(path).record
    assert {"assistant", "action_request", "action_response"} <= {m.kind for m in record}

    def by_dataclass(id, kind, created_at, content, metadata, file, line, *, path="", raw=None):
        return Message(id, kind, created_at, content, metadata, Provenance(file, line, path), raw)

    monkeypatch.setattr(stream, "new_message", by_dataclass)
    made = claude_code.read(path).record
    assert len(made) == len(record)
    for m, by_init in zip(record, made, strict=True):
        assert [getattr(m, f) for f in Message.__slots__] == [getattr(by_init, f) for f in Message.__slots__]
        assert type(m.content) is type(by_init.content) is Fields and type(m.metadata) is Fields


def test_fields_zipped_is_the_fields_of_the_dict_of_its_keys():
    # SessionBuilder._turn_messages makes a response's calls' and results' contents this way, without the dict
    for keys, values in [(("function", "arguments", "output"), ("Read", {"p": 1}, "ok")), (("only",), ("x",))]:
        made, from_dict = Fields.zipped(keys, values), Fields(dict(zip(keys, values, strict=True)))
        assert made == from_dict and list(made) == list(keys) and list(made.values()) == list(values)
        assert made._keys is from_dict._keys and made._values == from_dict._values  # one key tuple shared, one value alone


def test_the_session_id_cwd_and_version_are_each_the_first_line_to_name_them(tmp_path):
    # The reader asks each line for them only until all three are found (_Reader._heads): a later line's do not count
    lines = [
        {"type": "progress", "uuid": "p0", "cwd": "/first"},
        {"type": "progress", "uuid": "p1", "cwd": "/second", "sessionId": "s1"},
        {"type": "user", "uuid": "u0", "sessionId": "s2", "message": {"content": "hi"}},
        {"type": "user", "uuid": "u1", "parentUuid": "u0", "version": "2.0.1", "sessionId": "s3", "message": {"content": "x"}},
        {"type": "user", "uuid": "u2", "parentUuid": "u1", "version": "2.0.2", "cwd": "/third", "message": {"content": "y"}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    builder = claude_code.SessionBuilder(path, claude_code.FORMAT)
    reader = claude_code._Reader(builder)
    for number, value in enumerate(lines, 1):
        reader.feed(number, 0, value)
    assert (reader.session_id, builder.extras["cwd"], builder.extras["agent_version"]) == ("s1", "/first", "2.0.1")
    assert not reader.heads_wanted


# A usage figure of every kind: counts in range and at its edges, and each kind usage_figures refuses.
FIGURES = st.one_of(st.integers(0, 2**63 - 1), st.sampled_from([0, 2**63 - 1, 2**63, -1, True, False, 1.0, "3", None, [1], {}]))


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens", "service_tier"]),
        FIGURES,
    ),
    st.one_of(st.none(), st.just("x"), st.dictionaries(st.just("ephemeral_1h_input_tokens"), FIGURES)),
)
def test_a_usage_of_counts_reads_as_the_checked_figures_read_it(raw, creation):
    """claude_code_fields.usage_of reads a usage whose figures are all counts (ints in range, or absent) straight; any
    usage, so read or not, gives the Usage and the warnings the checked figures (usage_figures) give."""
    from foldscope.core.formats.claude_code_fields import usage_of
    from foldscope.core.model.session import Usage, bad_usage_warning, usage_figures

    if creation is not None:
        raw["cache_creation"] = creation
    got, bad = usage_figures(raw, ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"))
    hour, bad_1h = usage_figures(creation if isinstance(creation, dict) else {}, ("ephemeral_1h_input_tokens",))
    expected = None
    if not bad and not bad_1h:
        write = got["cache_creation_input_tokens"]
        expected = Usage(
            got["input_tokens"], got["cache_read_input_tokens"], write, got["output_tokens"], min(hour["ephemeral_1h_input_tokens"], write)
        )
    warned: list[str] = []
    assert usage_of(raw, warned.append) == expected
    assert warned == ([bad_usage_warning(bad + bad_1h)] if bad or bad_1h else [])
