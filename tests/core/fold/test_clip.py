"""ADR-0130 Amendment 2's clip stage: the newest large result, sixteen results, small deficits, mapping outputs."""

from __future__ import annotations

import json

from foldscope.core.fold.clip import CLIP_FLOOR, PREVIEW_LABEL, recovery_text
from foldscope.core.fold.history import session_at_request
from foldscope.core.fold.summarise import BriefSummariser
from foldscope.core.formats.demo import generate
from tests.core.fold_sessions import Build, calls_have_results, fold_for, payload, text_of


class SpySummariser(BriefSummariser):
    """The default brief, counting how often a summary is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def summarise(self, span, calls):
        self.calls += 1
        return super().summarise(span, calls)


def listing_request():
    """The demo before the request that carries its 100,045-character listing, not yet delivered."""
    session = generate()
    k = next(i for i, r in enumerate(session.trace) if session.record.get(r.response_id).text.startswith("Round 12"))
    at = session_at_request(session, k)
    listing = next(m for m in at.record if m.kind == "action_response" and m.content["function"] == "bash")
    return at, listing


def test_100045_char_result_in_newest_round_folds_to_the_target_with_a_copy_and_its_read_result_call():
    session, listing = listing_request()
    assert len(listing.content["output"]["stdout"]) == 100_045
    before = listing.sha256()
    spy = SpySummariser()
    fold = fold_for(session, 20_000, summariser=spy)
    run = fold.run()
    assert run.estimate_after <= 0.6 * 20_000 and run.target_reached
    assert session.record.get(listing.id).sha256() == before  # the original is unchanged in the full record
    assert listing.id not in session.view
    copy = next(m for m in session.view_messages() if m.clipped_from == listing.id)
    index = session.record.index_of(listing.id)
    stdout = copy.content["output"]["stdout"]
    assert f'context(action="read_result", index={index}, offset=' in stdout
    blocks = [b for m in payload(session)["messages"] for b in m["content"] if b["type"] == "tool_result"]
    carried = [json.loads(b["content"]) for b in blocks]
    assert any(c.get("stdout") == stdout for c in carried)  # the request carries the copy with its marker
    assert spy.calls == 0 and all(r["stage"] != "all" for r in run.records)  # no summary request was sent


def sixteen_results(chars: int = 4_000):
    b = Build()
    b.system(), b.task(), b.answer("Reading sixteen files at once.")
    pairs = b.round([text_of(chars, seed=i) for i in range(16)])
    delivered = [m.id for m in b.messages[:3]]
    return b.session(delivered=delivered), pairs


def test_sixteen_results_of_one_round_with_a_tail_of_two_all_reach_the_next_request():
    session, pairs = sixteen_results()
    estimate = fold_for(session, 10**9).estimate()
    ceiling = int(estimate / 0.85)
    run = fold_for(session, ceiling).run()
    assert run.target_reached
    assert all(r["stage"] == "clip" for r in run.records)  # neither tool_io nor all took one
    request = payload(session)
    uses = [b["id"] for m in request["messages"] for b in m["content"] if b["type"] == "tool_use"]
    assert len(uses) == 16 and calls_have_results(request)
    view = session.view_messages()
    for call, result in pairs:
        assert call.id in session.view
        assert any(m.id == result.id or m.clipped_from == result.id for m in view)


def test_a_small_deficit_cuts_a_little_not_to_the_floor():
    b = Build()
    b.system(), b.task(), b.answer()
    ((_, result),) = b.round([text_of(60_000)])
    session = b.session(delivered=[m.id for m in b.messages[:3]])
    estimate = fold_for(session, 10**9).estimate()
    ceiling = int(estimate / 0.80) - 1  # just past the line, with the target a little under it
    run = fold_for(session, ceiling, fold_at=0.8, target=0.78).run()
    clip = run.records[-1]
    assert clip["stage"] == "clip" and run.target_reached
    kept = clip["clipped"][0]["kept"]
    assert 50_000 < kept < 60_000
    assert clip["estimate_after"] <= 0.78 * ceiling < clip["estimate_after"] + 60  # just enough, not much more


def mapping_result():
    b = Build()
    b.system(), b.task(), b.answer()
    output = {
        "success": True,
        "content": text_of(40_000, 1),
        "items": list(range(3_000)),
        "error": None,
        "meta": {"nested": text_of(3_000, 2)},
        "note": "short",
    }
    ((_, result),) = b.round([output])
    return b.session(delivered=[m.id for m in b.messages[:3]]), result


def test_a_mapping_output_keeps_every_key_success_and_error_whole_and_a_list_becomes_a_labelled_preview():
    session, result = mapping_result()
    estimate = fold_for(session, 10**9).estimate()
    run = fold_for(session, int(estimate / 0.5), fold_at=0.5, target=0.1).run()
    assert run.records[-1]["stage"] == "clip"
    copy = next(m for m in session.view_messages() if m.clipped_from == result.id)
    original, shown = result.content["output"], copy.content["output"]
    assert list(shown) == list(original)  # every key, in order
    assert shown["success"] is True and shown["error"] is None and shown["note"] == "short"
    assert "characters omitted" in shown["content"] and len(shown["content"]) < 40_000
    assert shown["items"].startswith(PREVIEW_LABEL)  # a list value is a labelled preview
    assert json.loads(payload(session)["messages"][-1]["content"][0]["content"]).keys() == original.keys()


def test_each_kept_cut_is_measured_and_never_below_the_floor():
    session, _ = sixteen_results(chars=2_000)
    estimate = fold_for(session, 10**9).estimate()
    run = fold_for(session, int(estimate / 0.9), fold_at=0.8, target=0.1).run()
    clip = next(r for r in run.records if r["stage"] == "clip")
    assert clip["clipped_total"] == 16
    assert all(c["kept"] == CLIP_FLOOR for c in clip["clipped"])  # every body at the floor, target missed
    assert not clip["target_reached"] and clip["estimate_after"] < clip["estimate_before"]


def test_candidate_counting_adds_nothing_to_the_record_and_the_kept_copy_enters_once():
    session, listing = listing_request()
    call = next(m for m in session.record if m.content.get("action_response_id") == listing.id)
    size = len(session.record)
    run = fold_for(session, 20_000).run()
    notes = sum(1 for r in run.records if r["stage"] in ("tool_io", "all"))
    added = [session.record[i] for i in range(size, len(session.record))]
    assert len(added) == notes + 1  # the notes and exactly one copy: no candidate entered the record
    copy = next(m for m in added if m.kind == "action_response")
    assert copy.metadata["clipped_from"] == listing.id  # top level of the metadata
    assert "action_request_id" not in copy.content
    assert session.record.get(call.id).content["action_response_id"] == listing.id  # the request is unchanged
    assert copy.content["output"]["stdout"].startswith(recovery_text(listing)[len("stdout: ") :][:500])
