"""Why a message is out of the view, as the record panel says it."""

from __future__ import annotations

from foldscope.core.formats import claude_code
from foldscope.core.readout.document import out_reasons


def test_messages_of_an_abandoned_branch_are_shown_as_such(corpus_dev):
    session = claude_code.read(corpus_dev / "claude_code" / "extracted-dd381a75.jsonl")
    in_view = {session.record.index_of(m) for m in session.view}
    reasons = out_reasons(session, in_view)
    (rewind,) = [e for e in session.events if e["kind"] == "branch" and e["line"] == 20]
    for mid in rewind["abandoned"]:
        assert reasons[session.record.index_of(mid)].startswith("on an abandoned branch: line 20 went back to line 4")


def test_a_session_opened_again_from_the_library_takes_its_stored_counts_and_counts_no_message_again(tmp_path,
                                                                                                   monkeypatch):
    from foldscope.core.formats.demo import demo_path
    from foldscope.core.readout import document as document_module
    from foldscope.core.request.tokens import TOKENIZER_ID
    from foldscope.core.store.library import Library

    db = str(tmp_path / "library.db")
    first = document_module.open_document(demo_path(), db)
    with Library(db) as library:
        assert library.token_counts(first.library_id, TOKENIZER_ID) == first.tokens  # kept with the tokenizer's name

    def no_counting(text: str) -> int:
        raise AssertionError("a message was counted again")

    monkeypatch.setattr(document_module, "count_text", no_counting)
    again = document_module.open_document(demo_path(), db)
    assert again.library_id == first.library_id and again.tokens == first.tokens


def test_counts_kept_by_another_tokenizer_are_counted_again(tmp_path, monkeypatch):
    from foldscope.core.formats.demo import demo_path
    from foldscope.core.readout import document as document_module
    from foldscope.core.store.library import Library

    db = str(tmp_path / "library.db")
    first = document_module.open_document(demo_path(), db)
    with Library(db) as library:
        library.store_token_counts(first.library_id, "another tokenizer", [1] * len(first.tokens))
    counted: list[str] = []
    real = document_module.count_text
    monkeypatch.setattr(document_module, "count_text", lambda text: counted.append(text) or real(text))
    again = document_module.open_document(demo_path(), db)
    assert len(counted) == len(first.tokens) and again.tokens == first.tokens


def test_the_first_document_holds_the_record_and_view_with_characters_and_no_count():
    from foldscope.core.formats import load_session
    from foldscope.core.formats.demo import demo_path
    from foldscope.core.readout.document import build_document, first_document

    session = load_session(demo_path())
    first = first_document(session, str(demo_path()))
    assert not first.counted and first.tokens == [] and first.requests == []
    assert first.sizes == first.chars == [len(m.text) for m in session.record]
    assert first.size_label(0) == f"{first.chars[0]:,} characters (tokens not counted yet)"
    counted = build_document(session, str(demo_path()))
    assert counted.view_position == first.view_position and counted.out_reason == first.out_reason
    assert counted.sizes == counted.tokens and counted.size_label(0) == f"{counted.tokens[0]:,} tokens"
