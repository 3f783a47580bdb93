"""Every count the Counter gives is tiktoken's own count of the request's text, with the huge texts' paths taken."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.request import count_step
from foldscope.core.request.compile import compile_request, counted_text
from foldscope.core.request.count import Counter
from foldscope.core.request.tokens import reference_encoding
from tests.core.request.test_count import drawn_options
from tests.core.session_strategies import records, views


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_views_count_is_tiktokens_count_of_its_text_with_the_huge_paths_taken(data, monkeypatch):
    """Review7: this session's counting changes (a result's mapping escaped from its canonical bytes, the memo keys made
    at once, a huge ASCII text's escape check a megabyte at a time, a huge text's body in parts, new bodies in one pass)
    are each checked against the counter's own count of the whole text; this checks the count against tiktoken's
    Encoding itself, under every policy, with a huge text's paths taken by texts of 4 characters or more."""
    monkeypatch.setattr(count_step, "_HUGE", data.draw(st.sampled_from([4, 1 << 20]), label="huge text"))
    record = data.draw(records())
    view = data.draw(views(record))
    policy, tools, first_round = drawn_options(data, view)
    options = {"record": record, "policy": policy, "tools": tools, "first_round": first_round}
    try:
        text = counted_text(compile_request(view, **options))
    except Exception:
        return  # a view that cannot compile has no count (test_count checks the counter fails alike)
    assert Counter().count(view, **options) == len(reference_encoding().encode_ordinary(text))
