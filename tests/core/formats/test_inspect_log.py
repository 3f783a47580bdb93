"""The Inspect AI reader: every log under the corpus opens, each sample's requests and usage as its model events hold them."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import detect_format, inspect_log, load_session
from foldscope.core.model.session import ReadError
from tests.core.reader_checks import check_session
from tests.paths import CORPUS


def _logs() -> list[Path]:
    # Staged until this reader landed; in dev/ once moved. Both are walked so the tests keep running.
    found = sorted(p for folder in ("staged", "dev") for p in (CORPUS / folder / "inspect").glob("*") if p.suffix in (".json", ".eval"))
    if not found:
        pytest.skip("no Inspect AI logs in the corpus")
    return found


def _raw_samples(path: Path) -> list[dict]:
    """Each sample as the file holds it, read here without the reader."""
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as archive:
            return [json.loads(archive.read(n)) for n in archive.namelist() if n.startswith("samples/")]
    return json.loads(path.read_bytes())["samples"]


def _model_events(sample: dict) -> list[dict]:
    return [e for e in sample["events"] if e.get("event") == "model"]


def test_every_inspect_log_opens_and_each_sample_has_the_requests_and_usage_of_its_model_events():
    samples_seen = 0
    for path in _logs():
        assert detect_format(path) == "inspect", path.name
        for raw in _raw_samples(path):
            session = load_session(path, sample=f"{raw['id']}:{raw['epoch']}")
            check_session(session)
            events = _model_events(raw)
            assert len(session.trace) == len(events), path.name
            for request, event in zip(session.trace, events):
                usage = event["output"].get("usage")
                if usage is None:
                    assert request.usage is None
                    continue
                assert request.usage.output == usage["output_tokens"]
                whole = usage["input_tokens"] + (usage.get("input_tokens_cache_write") or 0)
                if usage["total_tokens"] != usage["input_tokens"] + usage["output_tokens"]:
                    whole += usage.get("input_tokens_cache_read") or 0
                assert request.usage.reported_input == whole, path.name
                size = len(event["input"]) or sum(b - a for a, b in event.get("input_refs") or ())
                assert len({m.split(":")[0] for m in request.view}) <= size
            samples_seen += 1
    assert samples_seen >= 7


def test_a_model_event_input_is_the_view_as_sent_even_from_the_message_pool():
    (path,) = [p for p in _logs() if p.name == "log_message_deduplication.eval"]
    session = load_session(path)
    raw = _raw_samples(path)[0]
    pool = raw["message_pool"]
    for request, event in zip(session.trace, _model_events(raw)):
        sent = [m["id"] for a, b in event["input_refs"] for m in pool[a:b]]
        assert [m for m in request.view if ":" not in m] == sent
    # Each response reappears in the next request's input as the same message, not a copy.
    for before, after in zip(session.trace, session.trace[1:]):
        assert before.response_id in after.view and set(before.view) < set(after.view)


def test_attachments_are_read_in_place_of_their_references():
    for path in _logs():
        for raw in _raw_samples(path):
            session = load_session(path, sample=f"{raw['id']}:{raw['epoch']}")
            for message in session.record:
                assert "attachment://" not in message.text and not message.text.startswith("tc://")


def test_inspect_lists_the_samples_of_a_log_and_sample_picks_one(capsys):
    (path,) = [p for p in _logs() if p.name == "2025-05-12T20-28-13-04-00_popularity.json"]
    assert main(["inspect", str(path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in listed["samples"]] == ["1:1", "2:1", "3:1"]
    assert main(["requests", str(path), "--sample", "2:1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["reported_input"] for r in rows["requests"]] == [58]
    assert main(["requests", str(path)]) == 2
    err = capsys.readouterr().err
    assert "holds 3 samples" in err and "--sample" in err and len(err.strip().splitlines()) == 1
    assert main(["inspect", str(path), "--sample", "9"]) == 2
    assert "no sample '9'" in capsys.readouterr().err
    # replay reads the sample asked for too (its flag once reached no file: every replay of a log of many samples failed)
    assert main(["replay", str(path), "--sample", "2:1", "--strategy", "recorded", "--json"]) == 0
    (recorded,) = json.loads(capsys.readouterr().out)["totals"]
    assert recorded["requests"] == 1 and recorded["reported_peak"] == 58
    assert main(["replay", str(path), "--strategy", "recorded"]) == 2
    assert "holds 3 samples" in capsys.readouterr().err


def test_a_log_with_no_samples_says_so_in_one_line(tmp_path, capsys):
    (path,) = [p for p in _logs() if p.name == "log_read_sample.json"]
    document = json.loads(path.read_bytes())
    document["samples"] = []
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(document), encoding="utf-8")
    for command in (["inspect", str(empty)], ["requests", str(empty)]):
        assert main(command) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "the log holds no samples" in err[0]


def test_a_compaction_event_is_a_note_and_the_next_request_carries_the_view_after_it(tmp_path):
    # No corpus log compacts; the event's shape is inspect_ai's CompactionEvent
    # (src/inspect_ai/event/_compaction.py: tokens_before, tokens_after, source).
    (path,) = [p for p in _logs() if p.name == "log_message_deduplication.eval"]
    with zipfile.ZipFile(path) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    sample = json.loads(members["samples/0_epoch_1.json"])
    models = [i for i, e in enumerate(sample["events"]) if e["event"] == "model"]
    at = models[3]
    sample["events"].insert(
        at,
        {
            "event": "compaction",
            "timestamp": sample["events"][at]["timestamp"],
            "tokens_before": 900,
            "tokens_after": 300,
            "source": "inspect",
        },
    )
    sample["events"][at + 1]["input_refs"] = [[0, 1], [5, 7]]  # the first prompt and the latest turn
    members["samples/0_epoch_1.json"] = json.dumps(sample).encode()
    out = tmp_path / "compacted.eval"
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    session = load_session(out)
    (event,) = [e for e in session.events if e["kind"] == "compaction"]
    assert (event["at_request"], event["pre_tokens"], event["post_tokens"]) == (3, 900, 300)
    assert session.record.get(event["note_id"]).kind == "note"
    assert len(session.trace[3].view) < len(session.trace[2].view)


def test_a_broken_log_is_one_clear_error_naming_the_place(tmp_path):
    (path,) = [p for p in _logs() if p.name == "log_read_sample.json"]
    data = bytearray(path.read_bytes())
    data[200] = 0xFF
    bad = tmp_path / "bad.json"
    bad.write_bytes(bytes(data))
    with pytest.raises(ReadError) as err:
        load_session(bad)
    assert err.value.place == "byte 200" and "UTF-8" in err.value.problem
    cut = tmp_path / "cut.eval"
    (eval_path,) = [p for p in _logs() if p.name == "log_formats.eval"]
    cut.write_bytes(eval_path.read_bytes()[:3000])
    with pytest.raises(ReadError) as err:
        load_session(cut)
    assert "archive" in str(err.value)


def test_sample_on_a_file_that_is_not_an_inspect_log_is_refused(corpus_dev):
    with pytest.raises(ReadError) as err:
        load_session(corpus_dev / "claude_code" / "short.jsonl", sample="1")
    assert "Inspect AI" in err.value.problem


def test_samples_lists_ids_epochs_and_requests():
    (path,) = [p for p in _logs() if p.suffix == ".eval" and "popularity" in p.name]
    listed = inspect_log.samples(path)
    assert [s["id"] for s in listed] == [str(n) for n in range(1, 11)]
    assert all(s["requests"] == 1 and s["epoch"] == 1 for s in listed)


def test_two_samples_of_one_log_are_two_library_sessions(tmp_path):
    from foldscope.core.store.library import Library

    (path,) = [p for p in _logs() if p.suffix == ".eval" and "popularity" in p.name]
    with Library(tmp_path / "lib.db") as library:
        first = library.import_session(load_session(path, sample="1"))
        second = library.import_session(load_session(path, sample="2"))
        again = library.import_session(load_session(path, sample="1"))
    assert first != second and again == first


def damaged_eval(tmp_path: Path) -> Path:
    """An .eval archive (header and one sample, deflated) whose sample's compressed bytes are flipped: the zip's
    directory is whole, the deflate stream is not."""
    sample = {"id": 1, "epoch": 1, "messages": [{"role": "user", "content": "hello " * 400}], "events": []}
    path = tmp_path / "damaged.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        archive.writestr("samples/1_epoch_1.json", json.dumps(sample))
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("samples/1_epoch_1.json")
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode())  # the local header's fixed part, then the name
    for i in range(start + 2, start + min(info.compress_size, 40)):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    return path


def test_a_damaged_eval_archive_is_one_line_naming_the_member_in_every_command(tmp_path, capsys):
    path = damaged_eval(tmp_path)
    with pytest.raises(ReadError) as err:
        load_session(path)
    assert err.value.place == "samples/1_epoch_1.json" and "cannot be read from the archive" in err.value.problem
    for command in (["inspect"], ["requests"], ["cache"]):
        assert main([command[0], str(path)]) == 2
        err_text = capsys.readouterr().err
        assert err_text.count("\n") == 1 and "samples/1_epoch_1.json" in err_text, err_text


def test_an_exported_inspect_log_keeps_its_tool_definitions_and_every_request_counts_what_was_sent(tmp_path, capsys):
    # Found by review8: the native file had no place for the tools, so request 0 of this log read back 229 -> 23.
    (path,) = [p for p in _logs() if p.name == "log_message_deduplication.eval"]
    assert load_session(path).extras.get("tools"), "the log sends tools with its requests"

    def counted(file: Path) -> list[int]:
        assert main(["requests", str(file), "--json"]) == 0
        return [r["counted"] for r in json.loads(capsys.readouterr().out)["requests"]]

    out, again = tmp_path / "exported.json", tmp_path / "again.json"
    assert main(["export", str(path), "-o", str(out)]) == 0
    assert main(["export", str(out), "-o", str(again)]) == 0  # and a second export of the export keeps them too
    capsys.readouterr()
    assert counted(out) == counted(again) == counted(path)
    assert load_session(out).extras["tools"] == load_session(path).extras["tools"]
