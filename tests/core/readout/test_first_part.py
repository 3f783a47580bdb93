"""Issue 17: a large Claude Code or Codex file shows its first part while the rest is read (usable within 3 s of
launch); the first part is the start of the whole file's record, and what is counted after is what a load without
a first part counts."""

from __future__ import annotations

import pytest

from foldscope.core.formats import load_session
from foldscope.core.readout import opening as opening_module
from foldscope.core.readout.opening import first_part, open_document

FILES = ["claude_code/session-196820da.jsonl", "claude_code/extracted-dd381a75.jsonl"]


def codex_file(corpus_dev):
    return max((corpus_dev / "codex").glob("*.jsonl"), key=lambda path: path.stat().st_size)


@pytest.mark.parametrize("name", FILES + ["codex"])
def test_the_first_part_is_the_start_of_the_whole_files_record_and_trace(corpus_dev, monkeypatch, name):
    path = codex_file(corpus_dev) if name == "codex" else corpus_dev / name
    monkeypatch.setattr(opening_module, "FIRST_PART_BYTES", path.stat().st_size // 4)
    monkeypatch.setattr(opening_module, "FIRST_PART_FROM", path.stat().st_size // 2)
    part = first_part(str(path))
    whole = load_session(path)
    assert part is not None and part.is_counted is False
    assert 0.2 <= part.read_part < 0.5  # a quarter of the bytes, to the end of the line that passes it
    ids = [m.id for m in part.session.record]
    assert 0 < len(ids) < len(whole.record)
    assert ids == [m.id for m in whole.record][: len(ids)]
    # Each message as the whole file has it, but for the last, a response whose later lines may not be read yet.
    assert part.chars[:-1] == [len(m.text) for m in whole.record][: len(ids) - 1]
    assert part.session.record[-1].kind == whole.record[len(ids) - 1].kind
    # The provider's reported input of the requests read so far (the timeline's dots) is the whole file's, request
    # by request; their whole usage too, but for the last, whose response's later lines may not be read yet.
    trace = part.session.trace
    assert trace and [r.usage.reported_input for r in trace] == [r.usage.reported_input for r in whole.trace][: len(trace)]
    assert [r.usage for r in trace[:-1]] == [r.usage for r in whole.trace][: len(trace) - 1]
    assert part.reading_note().startswith(f"the first {part.read_part:.0%} of the file")


def test_a_file_not_over_the_first_parts_threshold_or_not_a_line_format_has_no_first_part(corpus_dev, monkeypatch):
    path = corpus_dev / FILES[0]
    monkeypatch.setattr(opening_module, "FIRST_PART_BYTES", 1000)
    monkeypatch.setattr(opening_module, "FIRST_PART_FROM", path.stat().st_size)
    assert first_part(str(path)) is None
    monkeypatch.setattr(opening_module, "FIRST_PART_FROM", path.stat().st_size - 1)
    assert first_part(str(path)) is not None
    monkeypatch.setattr(opening_module, "FIRST_PART_FROM", 1000)
    lionagi = max((corpus_dev / "lionagi").iterdir(), key=lambda p: p.stat().st_size)
    assert first_part(str(lionagi)) is None


def test_a_load_shows_the_first_part_then_the_whole_record_and_counts_what_a_load_without_it_counts(corpus_dev, monkeypatch, tmp_path):
    path = corpus_dev / FILES[0]
    plain = open_document(path, str(tmp_path / "a.db"))
    monkeypatch.setattr(opening_module, "FIRST_PART_BYTES", path.stat().st_size // 4)
    monkeypatch.setattr(opening_module, "FIRST_PART_FROM", 0)
    shown: list = []
    counted = open_document(path, str(tmp_path / "b.db"), shown=shown.append)
    assert [d.read_part is not None for d in shown] == [True, False]
    assert shown[1].record_size == counted.record_size == plain.record_size > shown[0].record_size
    assert counted.read_part is None and counted.reading_note() == ""
    assert counted.tokens == plain.tokens and counted.record_tokens() == plain.record_tokens()
    assert [r.estimate for r in counted.requests] == [r.estimate for r in plain.requests]
    assert [r.reported_input for r in counted.requests] == [r.reported_input for r in plain.requests]
    assert (counted.now_size, counted.now_predicted) == (plain.now_size, plain.now_predicted)


def test_the_documents_shown_first_are_let_go_by_the_load_once_shown(corpus_dev, monkeypatch, tmp_path):
    """The first part and the whole record's first step are the window's to hold: the load keeps neither (the first
    part's session was alive through the count and the library's import, at the load's peak)."""
    import weakref

    path = corpus_dev / FILES[0]
    monkeypatch.setattr(opening_module, "FIRST_PART_BYTES", path.stat().st_size // 4)
    monkeypatch.setattr(opening_module, "FIRST_PART_FROM", 0)
    shown: list = []
    alive: list[list[bool]] = []
    counted = open_document(
        path,
        str(tmp_path / "a.db"),
        shown=lambda document: shown.append(weakref.ref(document)),
        on_counted=lambda document: alive.append([ref() is not None for ref in shown]),
    )
    # Freed by their counts, the collector off as in every load: nothing but the window held them.
    assert alive == [[False, False]]
    assert counted.chars == [len(m.text) for m in counted.session.record]


def one_line_messages(path, lines: int) -> None:
    """A Claude Code file of one-line prompts and answers, each line one message (bench/bench_scale.py's short shape)."""
    import json

    parent = None
    with open(path, "w", encoding="utf-8") as out:
        for n in range(lines):
            role = "user" if n % 2 == 0 else "assistant"
            message: dict = {"role": role, "content": f"line {n}"}
            if role == "assistant":
                message = {
                    **message,
                    "model": "claude-sonnet-4-5-20250929",
                    "id": f"msg_{n}",
                    "type": "message",
                    "content": [{"type": "text", "text": f"line {n}"}],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 5, "output_tokens": 3},
                }
            entry = {
                "parentUuid": parent,
                "sessionId": "s",
                "isSidechain": False,
                "type": role,
                "uuid": f"u{n}",
                "message": message,
                "timestamp": f"2026-01-01T00:00:{n % 60:02d}.000Z",
            }
            out.write(json.dumps(entry) + "\n")
            parent = f"u{n}"


def test_a_file_of_many_short_lines_under_the_bytes_threshold_shows_a_first_part_of_so_many_lines(monkeypatch, tmp_path):
    # A read costs by the line as much as by the byte: 50,000 one-line messages are 22 MB, far under 64 MB, and take
    # seconds to read. A file whose head says it holds over FIRST_PART_LINES_FROM lines shows FIRST_PART_LINES first.
    path = tmp_path / "short.jsonl"
    one_line_messages(path, 400)
    monkeypatch.setattr(opening_module, "FIRST_PART_LINES", 50)
    monkeypatch.setattr(opening_module, "LINES_SAMPLE", 50)
    monkeypatch.setattr(opening_module, "FIRST_PART_LINES_FROM", 300)
    assert path.stat().st_size < opening_module.FIRST_PART_FROM
    part = first_part(str(path))
    assert part is not None and part.is_counted is False
    assert part.record_size == 50  # one message a line, to the end of line 50
    assert [m.id for m in part.session.record] == [m.id for m in load_session(path).record][:50]
    assert part.read_part == pytest.approx(50 / 400, rel=0.1)
    monkeypatch.setattr(opening_module, "FIRST_PART_LINES_FROM", 500)  # fewer lines than that: read whole
    assert first_part(str(path)) is None


def test_a_first_part_ends_at_its_bytes_or_its_lines_whichever_comes_first(monkeypatch, tmp_path):
    path = tmp_path / "short.jsonl"
    one_line_messages(path, 400)
    size = path.stat().st_size
    lines = path.read_bytes().splitlines(keepends=True)
    monkeypatch.setattr(opening_module, "FIRST_PART_FROM", 0)
    monkeypatch.setattr(opening_module, "FIRST_PART_LINES", 50)
    monkeypatch.setattr(opening_module, "FIRST_PART_BYTES", size // 4)  # about 100 lines: the lines end first
    assert opening_module.first_part_end(str(path), size) == sum(map(len, lines[:50]))
    monkeypatch.setattr(opening_module, "FIRST_PART_BYTES", size // 20)  # about 20 lines: the bytes end first
    assert opening_module.first_part_end(str(path), size) == size // 20
    assert first_part(str(path)).record_size in (20, 21)  # to the end of the line that passes the bytes


def test_a_large_files_first_part_is_its_first_4_mib_a_fortieth_of_a_50k_session(tmp_path):
    # The whole read reads the first part again, on the path to the counted timeline: the part is kept small (a
    # 50,000-message Claude Code file is 171 MB). A sparse file of that size: no line ends, so the bytes end the part.
    path = tmp_path / "large.jsonl"
    with open(path, "wb") as out:
        out.truncate(171_100_000)
    end = opening_module.first_part_end(str(path), path.stat().st_size)
    assert end == 4 * 2**20 and end < path.stat().st_size / 40


def test_which_files_show_a_first_part_is_their_line_count_over_20000_whatever_the_parts_size(tmp_path):
    # The part's lines are the bytes' share; the threshold is the whole file's lines, judged from the part's.
    line = b"x" * 299 + b"\n"
    for lines, shows in ((19_000, False), (21_000, True)):
        path = tmp_path / f"{lines}.jsonl"
        path.write_bytes(line * lines)
        end = opening_module.first_part_end(str(path), path.stat().st_size)
        assert (end is not None) is shows
        assert end is None or end == opening_module.FIRST_PART_LINES * len(line)


def test_which_files_show_a_first_part_is_judged_from_a_head_larger_than_the_part(tmp_path):
    # The part is small (1,250 lines); the file's lines are judged from its first 5,000, as before the part shrank:
    # a head of long lines does not hide the short ones after it, nor a head of short lines hide long ones.
    cases = (
        ((1_250, 4_000), (150_000, 300), True),  # 50 MB, 151,250 lines
        ((1_300, 300), (12_000, 3_500), False),  # 43 MB, 13,300 lines
    )
    for (head, head_size), (rest, rest_size), shows in cases:
        path = tmp_path / f"{head}-{rest}.jsonl"
        path.write_bytes(
            b"x" * (head_size - 1) + b"\n" + (b"x" * (head_size - 1) + b"\n") * (head - 1) + (b"y" * (rest_size - 1) + b"\n") * rest
        )
        assert (opening_module.first_part_end(str(path), path.stat().st_size) is not None) is shows


def test_a_large_branch_shows_its_record_before_its_requests_then_again_with_them_and_counts_what_a_plain_load_does(
    corpus_dev, monkeypatch, tmp_path
):
    # A Branch is one JSON document, so it has no first part; its trace (0.5 s of a 151 MB file's read) is built
    # once the record is on screen, and the first step is shown again with the requests.
    path = corpus_dev / "lionagi" / "branch_v0.36.0_after_context_fold.synthetic.json"
    plain = open_document(path, str(tmp_path / "a.db"))
    seen: list[tuple[int, int]] = []
    shown = lambda d: seen.append((d.record_size, len(d.session.trace)))  # noqa: E731  (read when shown)
    monkeypatch.setattr(opening_module, "FIRST_PART_FROM", path.stat().st_size)
    open_document(path, str(tmp_path / "b.db"), shown=shown)
    assert seen == [(plain.record_size, len(plain.requests))]  # not over the threshold: one showing, with requests
    seen.clear()
    monkeypatch.setattr(opening_module, "FIRST_PART_FROM", path.stat().st_size - 1)
    counted = open_document(path, str(tmp_path / "c.db"), shown=shown)
    assert seen == [(plain.record_size, 0), (plain.record_size, len(plain.requests))] and plain.requests
    assert counted.tokens == plain.tokens
    assert [r.estimate for r in counted.requests] == [r.estimate for r in plain.requests]
    assert [r.reported_input for r in counted.requests] == [r.reported_input for r in plain.requests]
    assert (counted.now_size, counted.now_predicted) == (plain.now_size, plain.now_predicted)


def test_a_two_step_load_of_a_file_that_is_not_there_is_one_read_error_naming_it_and_shows_nothing(tmp_path):
    from foldscope.core.model.session import ReadError

    path = tmp_path / "gone.json"
    shown: list = []
    with pytest.raises(ReadError) as caught:
        open_document(path, str(tmp_path / "a.db"), shown=shown.append)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)
    assert shown == []
