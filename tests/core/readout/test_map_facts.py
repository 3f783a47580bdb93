"""The window map's view bar adds up to the size of the request it shows, as every other screen shows it."""

from __future__ import annotations

from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.readout.map_facts import view_bar, view_systems
from foldscope.core.readout.opening import build_document, first_document
from foldscope.core.readout.workspace import Workspace


def test_the_view_bar_adds_up_to_the_shown_requests_estimate_now_and_at_every_request():
    ws = Workspace(build_document(load_session(demo_path()), str(demo_path())))
    doc = ws.document
    for slot in [*range(len(doc.requests)), None]:
        ws.show_request(slot)
        bar = view_bar(doc)
        assert set(bar.widths) == set(doc.view_position)
        assert abs(bar.lead_total + sum(bar.widths.values()) - doc.shown_size) <= 1, slot
        assert all(tokens > 0 for _, tokens in bar.lead)


def test_a_system_message_in_view_carries_the_system_prompt_and_tools_else_they_lead_the_bar():
    ws = Workspace(build_document(load_session(demo_path()), str(demo_path())))
    doc = ws.document
    systems = view_systems(doc)
    assert systems and "system" not in dict(view_bar(doc).lead)
    assert "system" in dict(view_bar(doc, systems=set()).lead)  # no system message to carry them


def test_before_the_counts_land_the_bar_is_each_view_messages_characters_and_nothing_leads_it():
    doc = first_document(load_session(demo_path()), str(demo_path()))
    bar = view_bar(doc)
    assert bar.lead == () and bar.widths == {i: float(doc.chars[i]) for i in doc.view_position}
