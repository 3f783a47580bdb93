"""The demo session generator and the bundled demo file."""

import json

from foldscope.core.formats import load_session
from foldscope.core.formats.demo import LISTING_CHARS, MODEL, demo_path, generate, main
from foldscope.core.formats.lionagi import native_dict


def test_generation_is_deterministic_and_seeded():
    assert json.dumps(native_dict(generate(seed=4))) == json.dumps(native_dict(generate(seed=4)))
    assert native_dict(generate(seed=4)) != native_dict(generate(seed=5))


def test_the_bundled_demo_is_the_default_output(tmp_path):
    assert main([str(tmp_path / "demo.json")]) == 0
    assert (tmp_path / "demo.json").read_bytes() == demo_path().read_bytes()
    assert demo_path().stat().st_size < 1_000_000


def test_the_demo_has_what_the_issue_asks_for():
    session = load_session(demo_path())
    kinds = [m.kind for m in session.record]
    assert kinds[:2] == ["system", "instruction"] and kinds[-1] == "assistant"
    results = [m for m in session.record if m.kind == "action_response"]
    listings = [m for m in results if m.content["function"] == "bash"]
    assert [len(m.content["output"]["stdout"]) for m in listings] == [LISTING_CHARS]
    reads = [m for m in results if m.content["function"] == "reader"]
    assert all("def " in m.content["output"]["content"] for m in reads)
    # One round with sixteen results: sixteen responses between two assistant responses.
    runs, current = [], 0
    for kind in kinds:
        if kind == "assistant":
            runs.append(current)
            current = 0
        elif kind == "action_response":
            current += 1
    assert 16 in runs
    assert session.manifest["model"] == MODEL == session.model
    assert len(session.manifest["api_usage"]) == len(session.trace) == kinds.count("assistant")
    assert all(r.usage is not None and r.usage.reported_input > 0 for r in session.trace)
    assert any(r.usage.cache_read > 0 and r.usage.cache_write > 0 for r in session.trace)


def test_the_demo_fold_keeps_the_record_and_puts_a_note_in_view():
    session = generate()
    note = next(m for m in session.record if m.kind == "note")
    first = note.metadata["context_first_index"]
    assert session.record[first].kind == "action_request"
    assert session.record[first].id not in session.view and note.id in session.view
    assert len(session.manifest["context_folds"]) == 1


def test_large_sessions_on_request():
    session = generate(seed=1, rounds=300, listing_chars=2000)
    assert len(session.record) > 1000
    assert len(session.trace) == 301
