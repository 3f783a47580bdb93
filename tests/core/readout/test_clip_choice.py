"""The clip dialog's starting point comes from the readout: the original's index, its longest body, a start length."""

from __future__ import annotations

from foldscope.core.actions.commands import Clip, CommandStack
from foldscope.core.fold.clip import CLIP_FLOOR, bodies_of
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.readout.clip_facts import clip_choice
from foldscope.core.readout.opening import build_document


def test_a_clip_starts_at_a_quarter_of_the_longest_body_never_under_twice_the_floor_nor_the_whole_body():
    doc = build_document(load_session(demo_path()), str(demo_path()))
    results = [i for i, m in enumerate(doc.session.record) if m.kind == "action_response"]
    for index in results:
        choice = clip_choice(doc, index)
        longest = max((len(b.text) for b in bodies_of(doc.message(index))), default=0)
        assert choice.index == index and choice.longest == longest
        assert choice.start == min(max(CLIP_FLOOR * 2, longest // 4), max(longest - 1, 0))
        assert choice.start < longest or longest == 0
    largest = max(results, key=lambda i: clip_choice(doc, i).longest)
    assert clip_choice(doc, largest).start == clip_choice(doc, largest).longest // 4 > CLIP_FLOOR * 2


def test_a_clipped_copy_offers_its_original():
    doc = build_document(load_session(demo_path()), str(demo_path()))
    results = [i for i, m in enumerate(doc.session.record) if m.kind == "action_response"]
    largest = max(results, key=lambda i: clip_choice(doc, i).longest)
    assert CommandStack(doc.session).do(Clip(largest, 1500)).success
    copy = len(doc.session.record) - 1
    assert doc.message(copy).is_clipped_copy and clip_choice(doc, copy).index == largest
