"""The window map's view bar in tokens: what leads it (no message's) and each view message's part of the shown request."""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

from foldscope.core.readout.document import Document
from foldscope.core.readout.record_index import record_index

_id_of = attrgetter("id")


@dataclass(frozen=True)
class ViewBar:
    """The shown request as the view bar draws it, in estimate tokens, adding up to its size as every screen shows it:
    `lead` the blocks before the first message, (name, tokens): the unseen head, the system prompt and tools when no
    system message carries them, the JSON framing, the scale's margin; `widths` each view message's part by record
    index (a system message carries the system prompt and tools). Before the counts land: characters, no lead."""

    lead: tuple[tuple[str, float], ...] = ()
    widths: dict[int, float] = field(default_factory=dict)

    @property
    def lead_total(self) -> float:
        return sum(tokens for _, tokens in self.lead)


def view_systems(doc: Document) -> set[int]:
    """The shown view's system messages (the stable segment's): where the system prompt, tools and their mark go."""
    in_view = doc.view_position
    return {i for i in record_index(doc.session.record).systems if i in in_view}


def view_bar(doc: Document, systems: set[int] | None = None) -> ViewBar:
    """The view bar of the request `doc` shows (`systems`: view_systems, when the caller keeps it already)."""
    if not doc.is_counted:
        return ViewBar((), {i: float(doc.chars[i]) for i in doc.view_position})
    parts, scale = doc.shown_composition()
    messages, counts = zip(*parts.messages) if parts.messages else ((), ())
    places = doc.session.record.indexes_of(map(_id_of, messages))
    # Built in C, a dict per step: a 25,000-message view is one zip, not 25,000 stores (a view naming a message twice
    # keeps its last part, as a loop would). A message is drawn at its count, as on the record bar: the view is never
    # drawn longer than the record it comes from; what the scale adds leads the bar.
    widths = dict(zip(places, map(float, counts)))
    stable = float(parts.system + parts.tools)
    systems = view_systems(doc) if systems is None else systems
    leading = [("unseen_head", float(parts.unseen_head))]
    if systems:
        widths[min(systems)] = widths.get(min(systems), 0.0) + stable
    else:  # no system message to carry them: the system prompt and tools get their own block, in its colour
        leading.append(("system", stable))
    leading.append(("framing", float(parts.framing)))
    leading.append(("scale", parts.total * (scale - 1.0)))
    return ViewBar(tuple((name, tokens) for name, tokens in leading if tokens > 0), widths)
