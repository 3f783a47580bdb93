"""ADR-0130 Amendment 3's clip under a result bound: the effective retained count, copies from the original, one marker."""

from __future__ import annotations

import re

from foldscope.core.actions.commands import Clip, ReadResult, Restore
from foldscope.core.fold.clip import CLIP_FLOOR, bodies_of, build_copy, kept_of, recovery_text
from foldscope.core.fold.cuts import eligible_bodies
from foldscope.core.fold.fold import Fold
from foldscope.core.model.policy import Policy
from foldscope.core.request.compile import compile_request, payload_text
from foldscope.core.request.measure import Measure
from foldscope.core.request.projection import effective_count, project_output, retained_max, split
from tests.core.fold_sessions import Build, calls_have_results, fold_measure, text_of

MARKER = re.compile(r"\[\.\.\. ([\d,]+) characters omitted here \(offsets (\d+) to (\d+) of the original")


def bounded_fold(session, ceiling: int, bound: int, fold_at: float = 0.8, target: float = 0.6, **options) -> Fold:
    policy = Policy(max_input_tokens=ceiling, context_fold_at=fold_at, context_fold_target=target, tool_result_max_chars=bound)
    return Fold(session, Measure(session, policy), **options)


def small_deficit_fold(session, bound: int, deficit: int = 150) -> Fold:
    """A fold whose line is the view's estimate and whose target is `deficit` tokens under it."""
    estimate = bounded_fold(session, 10**6, bound).estimate()
    return bounded_fold(session, 10**6, bound, estimate / 10**6, (estimate - deficit) / 10**6)


def newest_round(outputs, extra_delivered: int = 0):
    """System, task, answer and one round of results the model has not read yet."""
    b = Build()
    b.system(), b.task(), b.answer("Reading.")
    pairs = b.round(outputs)
    return b.session(delivered=[m.id for m in b.messages[: 3 + extra_delivered]]), pairs


def one_copy(session, original):
    return next(m for m in session.view_messages() if m.clipped_from == original.id)


def assert_one_exact_marker(session, original, copy, bound: int) -> None:
    """The copy is the original's projection at its kept count: head, one complete marker, tail, within N."""
    index = session.record.index_of(original.id)
    kept = kept_of(copy)[None]
    text = original.content["output"]
    assert copy.content["output"] == project_output(original, index, bound, {None: kept})[0]
    shown = copy.content["output"]
    assert len(shown) <= bound and len(MARKER.findall(shown)) == 1
    head, tail = split(kept)
    omitted, start, end = (int(g.replace(",", "")) for g in MARKER.search(shown).groups())
    assert (start, end) == (head, len(text) - tail) and omitted == end - start
    assert shown.startswith(text[:head]) and shown.endswith(text[len(text) - tail :])
    pages, offset = [], head
    while offset < len(text) - tail:  # the continuation covers the omitted interval exactly
        read = ReadResult(index, offset, len(text) - tail - offset, max_chars=bound)
        read.do(session)
        assert read.result["limit"] <= min(bound, 16_000)
        pages.append(read.result["text"])
        offset = read.result["offset"] + len(read.result["text"])
    assert text[:head] + "".join(pages) + text[len(text) - tail :] == text


def test_clip_from_the_effective_retained_count_with_a_small_deficit_and_a_source_much_larger_than_n():
    session, [(_, listing)] = newest_round([text_of(100_000, seed=1)])
    fold = small_deficit_fold(session, 4_000)
    run = fold.run()
    [record] = run.records
    [entry] = record["clipped"]
    body = bodies_of(listing)[0]
    effective = effective_count(body, 3 + 1, 4_000)
    assert entry["kept_before"] == effective < 4_000 and entry["chars"] == 100_000
    assert CLIP_FLOOR + 1_000 < entry["kept"] < effective  # a little, not to the floor
    assert record["estimate_after"] < record["estimate_before"] and run.target_reached
    # The saving is what the cut removed from what the bound showed, never the source the bound hid.
    assert record["estimate_before"] - record["estimate_after"] < (effective - entry["kept"]) / 2
    copy = one_copy(session, listing)
    assert kept_of(copy) == {None: entry["kept"]}
    assert_one_exact_marker(session, listing, copy, 4_000)
    text = payload_text(compile_request(session.view_messages(), record=session.record, policy=fold.policy))
    assert len(MARKER.findall(text)) == 1  # the compiler applies the copy's allowance to the original: no second marker


def test_an_older_copy_whose_allowance_exceeds_n_is_clipped_from_its_effective_count():
    session, [(_, listing)] = newest_round([text_of(100_000, seed=2)])
    index = session.record.index_of(listing.id)
    Clip(index, 20_000).do(session)  # made before the bound: it keeps 20,000 characters
    old = one_copy(session, listing)
    fold = small_deficit_fold(session, 4_000)
    run = fold.run()
    [entry] = run.records[-1]["clipped"]
    effective = effective_count(bodies_of(listing)[0], index, 4_000, 20_000)
    assert entry["kept_before"] == effective < 4_000 < 20_000
    new = one_copy(session, listing)
    assert new.id != old.id and new.clipped_from == listing.id and entry["kept"] < effective
    assert_one_exact_marker(session, listing, new, 4_000)


def test_a_copy_whose_source_plus_marker_exceeds_n_counts_from_below_its_allowance():
    session, [(_, listing)] = newest_round([text_of(30_000, seed=3)])
    index = session.record.index_of(listing.id)
    Clip(index, 3_990).do(session)  # 3,990 source characters and a marker cannot fit 4,000
    copy = one_copy(session, listing)
    body = bodies_of(listing)[0]
    effective = effective_count(body, index, 4_000, kept_of(copy)[None])
    assert effective < 3_990 and len(project_output(listing, index, 4_000, kept_of(copy))[0]) <= 4_000
    [item] = eligible_bodies(session.view_messages(), session.record, set(), 0, 4_000)
    assert item.current == effective and item.floor == CLIP_FLOOR


def test_a_body_already_at_its_effective_floor_is_not_cut_and_the_missed_target_is_recorded():
    # Under N = 1,024 a 1,500-character body keeps k_N < 1,024 characters: its floor is k_N itself.
    session, [(_, result)] = newest_round([text_of(1_500, seed=4)])
    body = bodies_of(result)[0]
    k_n = retained_max(body, 4, 1_024)
    assert k_n < CLIP_FLOOR and effective_count(body, 4, 1_024) == k_n
    assert eligible_bodies(session.view_messages(), session.record, set(), 0, 1_024) == []
    fold = small_deficit_fold(session, 1_024, deficit=50)
    run = fold.run()
    assert not any(m.is_clipped_copy for m in session.record)
    assert not run.target_reached and all(r["stage"] != "clip" for r in run.records)


def test_several_bodies_are_taken_by_effective_count_and_every_kept_cut_strictly_lowers_the_request():
    mapping = {
        "success": True,
        "stdout": text_of(50_000, seed=5),
        "stderr": text_of(6_000, seed=6),
        "rows": [{"path": f"src/f{i}.py", "size": i} for i in range(400)],
    }
    session, pairs = newest_round([mapping, text_of(9_000, seed=7), text_of(2_500, seed=8)])
    items = eligible_bodies(session.view_messages(), session.record, set(), 0, 4_000)
    currents = [i.current for i in items]
    assert currents == sorted(currents, reverse=True) and all(c <= 4_000 for c in currents)
    fold = small_deficit_fold(session, 4_000, deficit=1_500)
    run = fold.run()
    clip = next(r for r in run.records if r["stage"] == "clip")
    assert clip["outcome"] == "landed" and clip["estimate_after"] < clip["estimate_before"]
    assert all(e["kept"] < e["kept_before"] for e in clip["clipped"])
    view = session.view_messages()
    final = fold.estimate(view)
    for position, m in enumerate(view):
        if not m.is_clipped_copy:
            continue
        original = session.record.get(m.clipped_from)
        index = session.record.index_of(original.id)
        output, kept = project_output(original, index, 4_000, kept_of(m))
        assert m.content["output"] == output and kept == kept_of(m)
        assert output["success"] is True if isinstance(output, dict) else True
        shown = payload_text({"m": output})
        assert len(MARKER.findall(shown)) == len(kept)  # one marker per shortened body
        # Undoing any one kept cut (the body at what the bound alone shows) raises the request.
        undone = view[:position] + [original] + view[position + 1 :]
        assert fold.estimate(undone) > final


def test_sixteen_undelivered_results_under_a_bound_all_stay_represented_and_reach_the_target():
    session, pairs = newest_round([text_of(6_000, seed=i) for i in range(16)])
    fold = bounded_fold(session, 20_000, 4_000)
    before = fold.estimate()
    assert before > fold.line_tokens
    run = fold.run()
    assert run.target_reached and all(r["stage"] == "clip" for r in run.records)
    view = session.view_messages()
    for call, result in pairs:
        assert call.id in session.view
        assert any(m.id == result.id or m.clipped_from == result.id for m in view)
    request = compile_request(view, record=session.record, policy=fold.policy)
    assert calls_have_results(request)
    for block in (b for m in request["messages"] for b in m["content"] if b["type"] == "tool_result"):
        assert len(block["content"]) <= 4_000


def test_restore_under_a_bound_stays_bounded_and_admission_counts_the_projection():
    session, [(_, listing)] = newest_round([text_of(100_000, seed=9)])
    index = session.record.index_of(listing.id)
    Clip(index, 2_000).do(session)
    bounded = bounded_fold(session, 6_000, 4_000)
    unbounded = Fold(session, fold_measure(session, 6_000))
    copy_id = one_copy(session, listing).id
    restored_view = [listing.id if mid == copy_id else mid for mid in session.view]
    assert not unbounded.fits(restored_view)  # the whole original is far over 6,000 tokens
    assert bounded.fits(restored_view)  # its projection under N = 4,000 is not
    refused = Restore([index], fits=unbounded.fits)
    refused.do(session)
    assert not refused.result["success"] and "read_result" in refused.result["error"]
    action = Restore([index], fits=bounded.fits)
    action.do(session)
    assert action.result["success"] and listing.id in session.view
    request = compile_request(session.view_messages(), record=session.record, policy=bounded.policy)
    [block] = [b for m in request["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert len(block["content"]) <= 4_000 and len(MARKER.findall(block["content"])) == 1


def test_read_result_under_a_bound_reports_the_applied_limit():
    session, [(_, listing)] = newest_round([text_of(30_000, seed=10)])
    policy = Policy(tool_result_max_chars=4_000)
    read = ReadResult(4, 100, 10_000, max_chars=policy.tool_result_max_chars)
    read.do(session)
    assert read.result["limit"] == 4_000 and read.result["text"] == recovery_text(listing)[100:4_100]
    unbounded = ReadResult(4, 0, 50_000)
    unbounded.do(session)
    assert unbounded.result["limit"] == 16_000


def test_unbounded_clip_keeps_amendment_2_arithmetic():
    session, [(_, listing)] = newest_round([text_of(30_000, seed=11)])
    estimate = Fold(session, fold_measure(session, 10**6)).estimate()
    fold = Fold(session, fold_measure(session, 10**6, estimate / 10**6, (estimate - 150) / 10**6))
    [record] = fold.run().records
    [entry] = record["clipped"]
    assert "kept_before" not in entry and CLIP_FLOOR < entry["kept"] < 30_000
    copy = one_copy(session, listing)
    assert copy.content == build_copy(listing, 4, {None: entry["kept"]}).content
