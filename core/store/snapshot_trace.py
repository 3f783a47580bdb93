"""A session's trace as the snapshot pickles it: one list a field of Request's, not a state a request."""

from __future__ import annotations

import dataclasses
import operator
from typing import Any

from foldscope.core.model.session import FullRecord, Request, Usage
from foldscope.core.model.views import SharedView
from foldscope.core.store.snapshot_ints import places_of

_REQUEST_FIELDS = tuple(f.name for f in dataclasses.fields(Request))
_USAGE_FIELDS = tuple(f.name for f in dataclasses.fields(Usage))
_NO_USAGE = (None, *(0,) * (len(_USAGE_FIELDS) - 1))  # a request with no usage: as wide as a usage's figures, None first


class Trace:
    """A trace pickled as columns, one list a field of Request's, where each request pickled as its own state left
    the pickler's memo holding that state until the dump's end (its fields' tuple, its usage's, its SharedView's dict
    and tuples: 8 MiB for 11,384 requests, over the window's peak while it pickles). A view is the list it shares
    (named once) and its length, a usage its figures in one list (None: None first); what the columns hold is
    the requests' own (alive anyway), so the dump keeps one list a field and a memo entry a string. A view's list
    and the response ids, where they are all the record's, are written as their places in it (Places), so no id
    takes a memo entry; dump_session_to pickles the trace apart, with its own memo, freed before the session's."""

    __slots__ = ("trace", "record")

    def __init__(self, trace: list[Request], record: FullRecord) -> None:
        self.trace, self.record = trace, record

    def __reduce__(self) -> tuple[Any, ...]:
        trace = self.trace
        shared: dict[int, int] = {}  # a SharedView's list, by id: its place in `lists`
        lists: list[Any] = []  # each a view's list as Places, or as itself where an id is not the record's
        views: list[Any] = []  # a SharedView as its list's place and length, any other view as itself
        lengths: list[int] = []
        for view in map(_VIEW, trace):
            if type(view) is SharedView:
                ids = view._ids
                place = shared.get(id(ids))
                if place is None:
                    place = shared[id(ids)] = len(lists)
                    lists.append(places_of(ids, self.record))
                views.append(place)
                lengths.append(len(view))
            else:
                views.append(view)
                lengths.append(-1)
        usages: list[int | None] = []
        for usage in map(_USAGE, trace):
            usages.extend(_NO_USAGE if usage is None else map(usage.__getattribute__, _USAGE_FIELDS))
        columns: list[Any] = [
            views if name == "view" else usages if name == "usage" else [getattr(r, name) for r in trace] for name in _REQUEST_FIELDS
        ]
        at = _REQUEST_FIELDS.index("response_id")
        columns[at] = places_of(columns[at], self.record)
        return requests, (lists, lengths, *columns)


_VIEW, _USAGE = operator.attrgetter("view"), operator.attrgetter("usage")


def requests(lists: list[list[str]], lengths: list[int], *columns: list[Any]) -> list[Request]:
    """The requests Trace pickled: each SharedView over the list it shared when pickled."""
    fields = dict(zip(_REQUEST_FIELDS, columns))
    views = [view if length < 0 else SharedView(lists[view], length) for view, length in zip(fields["view"], lengths)]
    figures = fields["usage"]
    width = len(_USAGE_FIELDS)
    usages = [None if figures[i] is None else Usage(*figures[i : i + width]) for i in range(0, len(figures), width)]
    fields.update(view=views, usage=usages)
    return list(map(Request, *(fields[name] for name in _REQUEST_FIELDS)))
