"""Strategies and metrics on hand-built traces with known answers."""

import functools

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from foldscope.core.model.cost import ModelPrices, Tier
from foldscope.core.model.one_line import collapsed_start
from foldscope.core.replay.lab import replay, run_strategy
from foldscope.core.replay.layouts import Layouts
from foldscope.core.replay.strategies import brief, first_index, material
from foldscope.core.request.compile import canonical
from foldscope.core.request.marks import cache_control
from foldscope.core.request.tokens import count_text
from tests.core.replay_sessions import tool_session, under

HAIKU = ModelPrices(
    "claude-haiku-5-5",
    (
        Tier(0, input=0.10, output=0.50, cache_read=0.01, cache_write_5m=0.125, cache_write_1h=0.20),
        Tier(100_000, input=0.50, output=2.50, cache_read=0.05, cache_write_5m=0.625, cache_write_1h=1.00),
    ),
)


def test_material_is_every_message_once_in_record_order():
    s = tool_session(5)
    flat = [m.id for new in material(s) for m in new]
    assert flat == [m.id for m in s.record][: len(flat)] and len(flat) == len(s.trace[-1].view)


MARK = count_text(canonical({"cache_control": cache_control("5m")}))


def test_none_only_appends_and_reads_the_previous_request_from_cache():
    s = tool_session(6)
    run = run_strategy(s, "none", under(s, caching=True), prices=HAIKU)
    rows = run.rows
    assert [r.change for r in rows] == ["first"] + ["append"] * 5
    for prev, row in zip(rows, rows[1:]):
        # the previous tail mark lies inside the common prefix; its block's closing punctuation
        # differs by a token or two once it is no longer last, and the mark itself (counted: the
        # estimate counts the compiled request, marks included) has moved on to the new tail
        assert abs(row.cache_read - prev.estimate) <= 3 + MARK
        assert row.cache_read + row.cache_write == row.estimate and row.fresh == 0
    assert rows[0].cache_write_1h > 0  # the stable segment's one-hour mark


def test_recorded_equals_none_on_a_session_without_management():
    s = tool_session(4)
    a = run_strategy(s, "recorded", under(s, caching=True), prices=HAIKU).totals()
    b = run_strategy(s, "none", under(s, caching=True), prices=HAIKU).totals()
    assert {k: v for k, v in a.items() if k != "strategy"} == {k: v for k, v in b.items() if k != "strategy"}


def test_without_caching_everything_is_fresh_and_costs_input_price():
    s = tool_session(3)
    run = run_strategy(s, "none", under(s), prices=HAIKU)
    assert all(r.cache_read == r.cache_write == 0 and r.fresh == r.estimate for r in run.rows)
    row = run.rows[1]
    assert row.cost_usd == pytest.approx((row.estimate * 0.10 + row.output * 0.50) / 1e6)


def test_band_commits_only_at_max_target_stops_at_min_target_in_one_rewrite():
    s = tool_session(30)
    full = Layouts(under(s)).estimate(list(s.record))
    settings = under(s, ceiling=full // 2, caching=True)
    rows = run_strategy(s, "band", settings, prices=HAIKU).rows
    none_rows = run_strategy(s, "none", settings, prices=HAIKU).rows
    commits = [r for r in rows if r.folds]
    assert commits, "the band must fire on a session twice its ceiling"
    for row in rows:
        if row.folds:
            assert row.change == "rewrite"
        else:
            assert row.change in ("first", "append")  # below max_target the window is quiet
    # the view reached max_target just before each commit, and never before the first
    first = rows.index(commits[0])
    assert all(r.estimate < 0.8 * settings.ceiling for r in rows[:first])
    pre_commit = none_rows[first].estimate
    assert pre_commit >= 0.8 * settings.ceiling
    assert sum(r.change == "rewrite" for r in rows) == len(commits)
    assert max(r.estimate for r in rows) < settings.ceiling


def test_band_folds_stalest_first_down_to_min_target():
    s = tool_session(30)
    m = Layouts(under(s))
    settings = under(s, ceiling=m.estimate(s.record) // 2)
    from foldscope.core.replay.strategies import band

    steps = [st for st in band(s, Layouts(settings)) if st.folds]
    assert steps
    for st in steps:
        raw = [x for x in st.view if x.kind != "note"]
        notes = [x for x in st.view if x.kind == "note"]
        # what stays raw fits under min_target; the briefs are what the commit wrote in its place
        assert m.estimate(raw) <= 0.2 * settings.ceiling
        assert m.estimate(st.view) < 0.8 * settings.ceiling
        # stalest first: every folded message is older than every raw one after the task
        folded = {i for n in notes for i in n.metadata["folded_ids"]}
        order = [x.id for x in s.record]
        newest_folded = max(order.index(i) for i in folded)
        assert all(order.index(x.id) > newest_folded for x in raw[2:])


def test_band_never_folds_the_head_the_task_or_the_open_tail():
    s = tool_session(30)
    settings = under(s, ceiling=Layouts(under(s)).estimate(list(s.record)) // 2)
    from foldscope.core.replay.strategies import band

    for step in band(s, Layouts(settings)):
        ids = [m.id for m in step.view]
        assert ids[:2] == ["sys", "task"]
        assert ids[-1] == s.trace[step.request].view[-1]


def test_compaction_counts_its_summary_request():
    s = tool_session(30)
    settings = under(s, ceiling=Layouts(under(s)).estimate(list(s.record)) // 2, caching=True)
    rows = run_strategy(s, "compaction", settings, prices=HAIKU).rows
    summaries = [r for r in rows if r.kind == "summary"]
    assert summaries and len(summaries) == sum(r.folds for r in rows)
    assert len(rows) == len(s.trace) + len(summaries)
    for summary in summaries:
        after = rows[summary.step + 1]
        assert summary.change == "append"  # it extends the last request with the summary prompt
        assert summary.cost_usd > 0 and summary.output > 0
        assert after.change == "rewrite" and after.messages == 2  # the system and the summary
        assert after.estimate < 0.2 * settings.ceiling


def test_totals_add_up_and_cost_follows_the_rows():
    s = tool_session(20)
    out = replay(
        s,
        ["recorded", "none", "band", "compaction"],
        under(s, ceiling=Layouts(under(s)).estimate(list(s.record)) // 2, caching=True),
        prices=HAIKU,
    )
    for totals in out["totals"]:
        rows = [r for r in out["rows"] if r["strategy"] == totals["strategy"]]
        assert totals["requests"] == len(rows)
        assert totals["cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in rows), abs=1e-6)
        assert totals["fresh"] + totals["cache_read"] + totals["cache_write"] == sum(r["estimate"] for r in rows)
    by = {t["strategy"]: t for t in out["totals"]}
    assert by["band"]["peak"] < by["none"]["peak"]
    assert out["cache"]["mode"] == "marks"


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="unknown strategy"):
        run_strategy(tool_session(1), "magic", under(tool_session(1)))


def test_adr_never_sends_a_request_over_the_ceiling_when_a_fold_can_avoid_it():
    from foldscope.core.fold.history import replay_folds

    s = tool_session(30)
    settings = under(s, ceiling=Layouts(under(s)).estimate(list(s.record)) // 3, caching=True)
    rows = run_strategy(s, "adr", settings, prices=HAIKU).rows
    refused = replay_folds(s, settings, clock=lambda: 0.0).refusals
    assert sum(r.folds for r in rows) > 0
    assert all(not r.over_ceiling for r in rows if r.request not in refused)
    assert max(r.estimate for r in run_strategy(s, "none", settings, prices=HAIKU).rows) > settings.ceiling


@pytest.mark.parametrize("name", ["none", "band", "compaction"])
def test_each_step_sends_the_view_before_and_what_arrived_sharing_the_view_befores_chunks(name):
    # A step's view is the one before with the request's new material, unless a fold or compaction just landed; it
    # is a Shared grown from the view before, so what two requests share is shared, not copied (core.model.shared_start).
    from foldscope.core.model import shared_start as sh
    from foldscope.core.replay.strategies import STRATEGIES

    with sh.small_chunks():
        s = tool_session(40, result_words=200)
        m = Layouts(under(s, ceiling=20_000), head=0, scale=1.0)
        new = material(s)
        before: list = []
        sent = None
        folded = kept = 0
        for step in STRATEGIES[name](s, m):
            assert isinstance(step.view, sh.Shared)
            if step.kind == "summary":
                assert list(step.view)[:-1] == before + new[step.request] and step.view[-1].kind == "instruction"
                continue
            if step.folds:
                folded += 1
            else:
                assert list(step.view) == before + new[step.request]
            if sent is not None:
                same = next((i for i, (a, b) in enumerate(zip(sent, step.view)) if a is not b), min(len(sent), len(step.view)))
                whole = same // sh.CHUNK  # the whole chunks inside the shared start are the view before's own
                assert len(step.view.chunks) >= whole and all(a is b for a, b in zip(step.view.chunks[:whole], sent.chunks))
                kept += whole
            before, sent = list(step.view), step.view
        assert kept > 0 and (folded or name == "none")


def test_band_nests_the_stalest_briefs_once_consolidate_after_roots_stand():
    # pi-fold 3.1.0: consolidateAfter is how many visible roots a parent is owed; folds nest, never partly overlap.
    # Without nesting a long session's briefs pile up until they alone pass max_target and every request commits.
    from foldscope.core.replay.strategies import CONSOLIDATE_AFTER, band

    s = tool_session(300)
    settings = under(s, ceiling=Layouts(under(s)).estimate(list(s.record)) // 40)
    order = {m.id: i for i, m in enumerate(s.record)}
    steps = list(band(s, Layouts(settings)))
    parents = {m.id: m for st in steps for m in st.view if m.metadata.get("children")}
    assert parents, "a session forty times its ceiling must nest briefs"
    for st in steps:
        assert sum(m.kind == "note" for m in st.view) < CONSOLIDATE_AFTER
    for parent in parents.values():
        ids = parent.metadata["folded_ids"]  # the record messages it stands for, in record order, each once
        assert all(i in order for i in ids) and [order[i] for i in ids] == sorted({order[i] for i in ids})
    rows = run_strategy(s, "band", settings, prices=HAIKU).rows
    assert max(r.estimate for r in rows) < settings.ceiling
    assert sum(r.folds for r in rows) < len(rows) / 2  # commits stay spaced: the band's hysteresis holds


_SPACES = " \t\n\u00a0\u2003"


@given(hs.text(alphabet=_SPACES + "ab", max_size=2_000), hs.integers(0, 300))
def test_a_briefs_line_reads_the_collapsed_start_of_a_message_however_little_of_it_it_reads(text, n):
    assert collapsed_start(text, n) == " ".join(text.split())[:n]


@functools.cache
def _forty_rounds():
    return tool_session(40)


def _brief_written_whole(session, span, max_chars):
    """The brief as written before it stopped at its bound: every message's line, then cut."""
    first, last = first_index(session, span[0]), first_index(session, span[-1])
    lines = [f"[folded {len(span)} messages, record #{first} to #{last}; the originals stay in the full record]"]
    lines += [f"- {m.kind if m.kind != 'action_request' else 'call'}: {collapsed_start(m.text, 110)}" for m in span]
    out = "\n".join(lines)
    return out if len(out) <= max_chars else out[: max_chars - 1] + "…"


@given(hs.integers(0, 39), hs.integers(1, 40), hs.integers(1, 3_000))
def test_a_brief_stops_reading_its_span_past_its_bound_and_writes_what_writing_it_whole_then_cutting_gives(start, length, max_chars):
    # A compaction's span is the whole view: the lines past the bound are never rendered, and the brief is the same.
    s = _forty_rounds()
    span = list(s.record)[start : start + length]
    assert brief(s, span, max_chars) == _brief_written_whole(s, span, max_chars)


@pytest.mark.parametrize("strategy", ["band", "compaction"])
def test_a_strategys_brief_stands_for_every_record_message_it_folded_in_order(strategy):
    # Each brief's folded ids (grown from the brief it holds, not copied) are the ids a copying build lists.
    s = tool_session(40)
    measure = Layouts(under(s, ceiling=2_500), head=0)
    run = run_strategy(s, strategy, measure, keep_views=True)
    notes = {m.id: m for view in run.views for m in view if m.kind == "note"}
    assert notes, f"{strategy} folded nothing: the test needs a lower ceiling"
    record_ids = [m.id for m in s.record]
    for note in notes.values():
        ids = list(note.metadata["folded_ids"])
        assert ids and all(i in record_ids for i in ids)
        assert ids == sorted(ids, key=record_ids.index)  # in record order, each once
        assert len(set(ids)) == len(ids)
    nested = [n for n in notes.values() if n.metadata.get("children")]
    for note in nested:  # a brief that holds briefs stands for all their messages
        children = [notes[c] for c in note.metadata["children"] if c in notes]
        assert all(set(c.metadata["folded_ids"]) <= set(note.metadata["folded_ids"]) for c in children)


@given(hs.randoms(use_true_random=False))
def test_what_a_request_first_carries_is_in_record_order_whatever_order_its_view_lists_it(rnd):
    from dataclasses import replace

    s = tool_session(6)
    want = [[m.id for m in new] for new in material(s)]
    shuffled = []
    for r in s.trace:
        view = list(r.view)
        rnd.shuffle(view)
        shuffled.append(replace(r, view=tuple(view)))
    s.trace = shuffled
    assert [[m.id for m in new] for new in material(s)] == want
