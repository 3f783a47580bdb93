"""The shown request as the request panel reads it: its compiled payload with its bytes and sizes, and the next view."""

from __future__ import annotations

from collections.abc import Sequence

from foldscope.core.readout.document import Document
from foldscope.core.request.compile import payload_bytes


def compiled(document: Document, slot: int | None) -> tuple[dict, int, int, int, float]:
    """(payload, bytes, exact o200k tokens of its counted text, its unseen head, its scale) for request `slot`
    (None: the next request, now), as the Measure sizes it: a recorded request as the trace measured it (its own
    stretch's head, its own scale, its own first round), the next one under the policy in force."""
    if slot is None or slot >= len(document.requests):
        measure = document.measure_for()
        messages = measure.messages(document.session.view)
        payload = measure.payload(messages)
        return payload, len(payload_bytes(payload)), measure.count(messages), measure.unseen_head, measure.scale
    assert document.measure is not None
    row = document.measure.request(slot)
    payload = document.measure.request_payload(slot)
    return payload, len(payload_bytes(payload)), row.own_count, row.unseen_head, row.scale


def next_view(document: Document, slot: int) -> Sequence[str]:
    """The view the request after `slot` is compiled from (after the last request: the active view now)."""
    return document.requests[slot + 1].view if slot + 1 < len(document.requests) else document.session.view
