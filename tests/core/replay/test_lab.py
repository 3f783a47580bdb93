"""Replay's incremental measure and layout give the rows of measuring and laying out every view whole; the
unseen head joins every replayed request of a session that reported usage."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.formats.demo import generate
from foldscope.core.model.session import Message
from foldscope.core.model.shared_start import Shared
from foldscope.core.replay.lab import run_strategy
from foldscope.core.replay.layouts import HIDDEN_HEAD, Layouts
from foldscope.core.replay.strategies import STRATEGIES
from foldscope.core.request.measure import Measure
from tests.core.replay_sessions import under


class WholeLayouts(Layouts):
    """The reference: every view planned whole, every layout built from scratch, marks found by scanning."""

    def measurement(self, view):
        return self.counter.measure_whole(view, **self.measure.options(view))

    def laid(self, view, over=None):
        # a view compiled under another measure (adr's fold's own) is planned whole under that one, as it decides
        m = self.measurement(view) if over is None else self.counter.measure_whole(view, **over.options(view, decide=False))
        total, keys, ends = self.head, [], []
        for i, part in enumerate(m.parts):
            total += part.tokens
            keys.append(("head", tuple(x.id for x in view if x.kind == "system")) if i == 0 else part.message.id)
            ends.append(-(-round(total * self.scale, 6) // 1))
        if self.head:
            keys, ends = [HIDDEN_HEAD] + keys, [-(-round(self.head * self.scale, 6) // 1)] + ends
        self._kinds = {x.id: x.kind for x in view}
        self._keys = keys
        return tuple(keys), tuple(int(e) for e in ends)

    def position(self, key):
        return next((i for i in range(len(self._keys) - 1, -1, -1) if self._keys[i] == key), None)

    def marks(self, previous_tail):
        from foldscope.core.replay.layouts import place_marks

        return place_marks(self._keys, self._kinds, previous_tail, self.protected)  # every block searched


@pytest.mark.parametrize("strategy", list(STRATEGIES))
@pytest.mark.parametrize("head", [0, 5_000])
def test_incremental_replay_rows_equal_the_whole_computation(strategy, head):
    session = generate(rounds=30)
    ceiling = Layouts(Measure(session), head=0).estimate(list(session.record)) // 3
    measure = under(session, ceiling=ceiling, caching=True)
    fast = run_strategy(session, strategy, Layouts(measure, head=head, scale=1.0))
    whole = run_strategy(session, strategy, WholeLayouts(under(session, ceiling=ceiling, caching=True), head=head, scale=1.0))
    assert fast.rows == whole.rows


def test_replay_carries_the_unseen_head_of_a_claude_code_session(corpus_dev):
    from foldscope.core.formats import load_session
    from foldscope.core.request.trace_measure import measure_trace

    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    head = measure_trace(session).unseen_head
    assert head > 10_000 and session.unseen_head == 0
    measure = Layouts(Measure(session))
    assert measure.head == head  # measured as foldscope.core.request.trace measures it
    # `none` sends the recorded views as modelled (recorded's own estimates are the trace's, head and all)
    rows = run_strategy(session, "none", measure).rows
    bare = run_strategy(session, "none", Layouts(Measure(session), head=0)).rows
    assert all(r.estimate >= b.estimate + head for r, b in zip(rows, bare))
    reported = [(r.estimate, t.usage.reported_input) for r, t in zip(rows, session.trace) if t.usage]
    assert max(abs(e - x) / x for e, x in reported) < 0.25  # near what the provider billed


def test_a_rows_plain_data_is_what_msgspec_asdict_gives():
    from msgspec.structs import asdict

    session = generate(rounds=12)
    rows = run_strategy(session, "adr", Layouts(under(session, ceiling=20_000, caching=True), head=0, scale=1.0)).rows
    assert rows and all(row.as_dict() == asdict(row) and list(row.as_dict()) == list(asdict(row)) for row in rows)


def test_the_recorded_replay_shows_each_request_at_the_estimate_requests_gives_and_the_reported_peak(corpus_dev, capsys):
    # One size for one request: replay's recorded rows are the requests table's estimates, and its totals name the
    # provider's peak beside the estimated one.
    import json

    from foldscope.core.cli.main import main

    path = corpus_dev / "claude_code" / "session-9eda1058.jsonl"
    assert main(["requests", str(path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["requests"]
    assert main(["replay", str(path), "--strategy", "recorded", "--per-request", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    rows = [r for r in result["rows"] if r["strategy"] == "recorded"]
    assert [r["estimate"] for r in rows] == [r["estimate"] for r in listed]
    (totals,) = result["totals"]
    assert totals["peak"] == max(r["estimate"] for r in listed)
    assert totals["reported_peak"] == max(r["reported_input"] for r in listed if r["reported_input"])


def test_every_strategy_runs_at_the_scale_requests_measures_so_an_unfolded_request_has_one_size(corpus_dev, capsys):
    # Under a ceiling no request reaches, no strategy folds: each sends the recorded views, so each shows the
    # recorded peak (the requests table's largest estimate), not a peak at another scale.
    import json

    from foldscope.core.cli.main import main

    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    assert main(["requests", str(path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["scale"] > 1.0  # a calibrated scale: at the kept scale (1.0) the strategies showed smaller sizes
    assert main(["replay", str(path), "--json"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    assert all(t["folds"] == 0 for t in totals)
    assert {t["peak"] for t in totals} == {max(r["estimate"] for r in listed["requests"])}


def test_the_replay_text_says_to_set_strategies_against_the_modelled_recording_not_the_bill(corpus_dev, capsys):
    from foldscope.core.cli.main import main

    assert main(["replay", str(corpus_dev / "claude_code" / "session-196820da.jsonl"), "--strategy", "recorded,none"]) == 0
    out = capsys.readouterr().out
    assert "set them against recorded's modelled cost" in out and "not its bill" in out


# One step of a replay's views: the next recorded messages arrive, a span folds into a note, a message is swapped
# for a new object, the view starts over, or another view is measured in between (as the band's estimate of the
# view before its commit, or the fold's candidates), so the counter steps from a view the layout never saw.
lay_step = st.one_of(
    st.tuples(st.just("arrive"), st.integers(1, 8)),
    st.tuples(st.just("fold"), st.integers(0, 40)),
    st.tuples(st.just("swap"), st.integers(0, 40)),
    st.tuples(st.just("fresh"), st.integers(0, 20)),
    st.tuples(st.just("probe"), st.integers(0, 40)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(lay_step, max_size=20), st.sampled_from([0, 3_000]), st.booleans())
def test_a_layout_equals_the_one_built_whole_whatever_was_measured_between_two_layouts(steps, head, caching):
    session = generate(rounds=12)
    record = list(session.record)
    fast = Layouts(under(session, ceiling=50_000, caching=caching), head=head, scale=1.25)
    whole = WholeLayouts(under(session, ceiling=50_000, caching=caching), head=head, scale=1.25)
    view: list = list(record[:3])
    taken, made = 3, 0
    seen: set = set()  # every block key laid out so far
    for op, n in steps:
        if op == "arrive":
            view = view + record[taken : taken + n]
            taken = min(len(record), taken + n)
        elif op == "fold" and len(view) > 3:
            a = 2 + n % (len(view) - 2)
            made += 1
            note = Message(f"note{made}", "note", None, {"assistant_response": f"folded {len(view) - a}"})
            view = view[:a] + [note] + view[a + 2 :]
        elif op == "swap" and len(view) > 1:
            i = n % len(view)
            old = view[i]
            view = view[:i] + [Message(old.id, old.kind, old.created_at, old.content, old.metadata)] + view[i + 1 :]
        elif op == "fresh":
            taken = n % (len(record) + 1)
            view = list(record[:taken])
        elif op == "probe":  # the view as it stands, or a start of it, with the next messages
            cut = len(view) if n % 2 else n % (len(view) + 1)
            fast.estimate(view[:cut] + record[taken : taken + n % 3])
            continue
        got, want = fast.layout(view, (), None), whole.layout(view, (), None)
        assert (got.keys, got.ends) == (want.keys, want.ends)
        for key in {*seen, *want.keys}:  # where each block of this layout is, and that no block left stays found
            assert fast.position(key) == whole.position(key)
            assert fast.marks(key) == whole.marks(key)  # its notes and members kept, this block the last tail
        assert fast.marks(None) == whole.marks(None)
        seen.update(want.keys)


def test_a_layout_keeps_no_block_when_the_head_changed_under_the_same_parts():
    # The head (system and tools) is made afresh for every measurement: the blocks after it are kept only when
    # its key and tokens are the layout's before, since every later block's end counts it.
    from foldscope.core.replay.layouts import kept_parts
    from foldscope.core.request.count import Measurement, Part

    system = Message("s", "system", None, {"system_message": "be brief"})
    body = tuple(Part(Message(f"m{i}", "instruction", None, {"instruction": "x"}), "instruction", 5) for i in range(4))

    def key(m, i, part):
        return ("head", ("s",)) if i == 0 else part.message.id

    before = (Part(system, "system", 40), *body)
    assert kept_parts(7, before, ("head", ("s",)), Measurement(60, (Part(system, "system", 40), *body), 8, 3), key) == 5
    assert kept_parts(7, before, ("head", ("s",)), Measurement(60, (Part(system, "system", 41), *body), 8, 3), key) == 0
    assert kept_parts(7, before, ("head", ("t",)), Measurement(60, (Part(system, "system", 40), *body), 8, 3), key) == 0
    assert kept_parts(7, before, ("head", ("s",)), Measurement(60, (Part(system, "system", 40), *body[:2]), 8, 3), key) == 3


@pytest.mark.parametrize("caching", [False, True])
@pytest.mark.parametrize("name", ["session-196820da.jsonl", "session-9eda1058.jsonl", "tool_heavy.jsonl"])
def test_the_recorded_counts_read_from_the_trace_are_the_counts_of_each_recorded_view(corpus_dev, name, caching):
    # The unseen head of a session whose trace measured none is found again from each recorded view's count; the
    # trace's own counts stand for them, but for a request compiled before the first round was decided.
    from foldscope.core.formats import load_session
    from foldscope.core.replay.layouts import recorded_counts
    from foldscope.core.replay.strategies import recorded_views

    session = load_session(corpus_dev / "claude_code" / name)
    measure = under(session, ceiling=150_000, caching=caching)
    report = measure.calibrate(prefix=False)
    assert recorded_counts(measure, report) == [measure.count(view) for view in recorded_views(session)]
    if caching and name != "session-196820da.jsonl":  # its first round never fits whole: nothing is decided
        assert report.decision is not None and report.rows[0].first_round is None  # the case the recount is for


def test_a_replay_calibrates_without_the_predictions_and_every_count_scale_and_estimate_stays(corpus_dev, monkeypatch):
    # The replay reads the trace's counts, scales, estimates and unseen head, never its predicted inputs, so its
    # calibration leaves the predictions' pass out (about a tenth of the trace's measure); what it does read is the
    # same. Checked on a real session whose reported usage calibrates the scale (the predictions flag some reports).
    from foldscope.core.formats import load_session
    from foldscope.core.request import trace_measure as trace_measure_module
    from foldscope.core.request.trace_measure import measure_trace

    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    whole = measure_trace(load_session(path), prefix=False)
    session = load_session(path)
    measure = Measure(session)

    def no_predictions(*args, **kwargs):
        raise AssertionError("the replay ran the predictions' pass")

    monkeypatch.setattr(trace_measure_module, "predict_requests", no_predictions)
    layouts = Layouts(measure)
    rows = run_strategy(session, "recorded", layouts).rows
    bare = measure.calibrate(prefix=False, predict=False)
    assert not bare.predicted and whole.predicted
    kept = ("index", "estimate", "count_with_head", "scale", "reported_input", "over_ceiling", "refusal", "unseen_head")
    assert [[getattr(r, f) for f in kept] for r in bare.rows] == [[getattr(r, f) for f in kept] for r in whole.rows]
    assert (bare.scale, bare.scales, bare.unseen_head) == (whole.scale, whole.scales, whole.unseen_head)
    assert layouts.scale == whole.scale and layouts.head == whole.unseen_head
    assert [r.estimate for r in rows] == [r.estimate for r in whole.rows]
    # Asked for with them, the trace is measured again (never a row without its prediction); a trace measured with
    # them serves a call without them.
    monkeypatch.undo()
    full = measure.calibrate(prefix=False)
    assert full.predicted and [r.predicted for r in full.rows] == [r.predicted for r in whole.rows]
    assert measure.calibrate(prefix=False, predict=False) is full


@pytest.mark.parametrize("head", [0, 3_000])
@pytest.mark.parametrize("strategy", ["adr", "band", "compaction", "none"])
def test_the_marks_a_layout_keeps_are_the_marks_its_keys_searched_give(strategy, head):
    # Layouts.marks reads the notes, protected members and last tail's place from what the layout kept, request by
    # request: the same marks as place_marks gives from the keys alone, searching every block (a hidden head or not;
    # the session's first messages taken as an included first round's members, so its mark is placed too).
    from foldscope.core.replay import lab
    from foldscope.core.replay.layouts import place_marks

    session = generate(rounds=40)
    measure = Layouts(under(session, ceiling=12_000, caching=True), head=head, scale=1.0)
    measure.protected = frozenset(session.view[:4])
    seen: list[tuple[tuple, tuple]] = []
    laid, kept = Layouts.laid, Layouts.marks

    def laid_and_kinds(self, view, over=None):
        keys, ends = laid(self, view, over)
        self._kinds = {m.id: m.kind for m in view}
        return keys, ends

    def marks(self, previous_tail):
        got = kept(self, previous_tail)
        keys = list(self._laid.keys)
        want = place_marks(keys, self._kinds, previous_tail, self.protected)
        seen.append((got, want))
        return got

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Layouts, "laid", laid_and_kinds)
        mp.setattr(Layouts, "marks", marks)
        lab.run_strategy(session, strategy, measure)
    assert len(seen) > 15 and any(len(got) >= 3 for got, _ in seen)
    assert all(got == want for got, want in seen)


def test_only_the_recorded_rows_carry_the_providers_reported_input():
    # The provider counted the recorded requests alone: a modelled strategy's row names no reported input and no
    # reported refusal (None, never a figure that reads as measured), the recorded one the provider's own.
    from foldscope.core.model.session import Usage
    from tests.core.replay_sessions import tool_session

    session = tool_session(12, usage=lambda r: Usage(input=1_000 + r, cache_read=50_000, output=10))
    measure = Layouts(under(session, ceiling=30_000), head=0, scale=1.0)
    for strategy in STRATEGIES:
        rows = run_strategy(session, strategy, measure).rows
        assert len(rows) == 12
        if strategy == "recorded":
            assert [r.reported_input for r in rows] == [51_000 + k for k in range(12)]
            assert all(r.reported_over_ceiling for r in rows)  # 51,000 and more against a ceiling of 30,000
        else:
            assert all(r.reported_input is None and r.reported_over_ceiling is None for r in rows), strategy


def test_the_layout_of_the_view_just_estimated_asks_the_measure_once():
    # Band and compaction estimate each view before they send it; the layout that follows reads the measurement that
    # estimate made, where it asked the Measure a second time for the same view (its options and memo check again).
    session = generate(rounds=8)
    layouts = Layouts(under(session, ceiling=50_000, caching=True), head=2_000, scale=1.25)
    asked = []
    measurement = layouts.measure.measurement

    def counted(view, **how):
        asked.append(view)
        return measurement(view, **how)

    layouts.measure.measurement = counted
    view = Shared(session.record)  # the strategies' views: a Shared never changes
    size = layouts.estimate(view)
    layouts.laid(view)
    assert asked == [view]
    assert size == layouts.measure.estimate(view, head=2_000, scale=1.25)


def test_a_layout_is_of_the_view_asked_not_of_the_view_estimated_before_it():
    # The measurement estimate() keeps is read only for that very view object: a layout of another view, or of an
    # equal copy of it, is the one built whole.
    session = generate(rounds=8)
    record = list(session.record)
    fast = Layouts(under(session, ceiling=50_000, caching=True), head=2_000, scale=1.25)
    whole = WholeLayouts(under(session, ceiling=50_000, caching=True), head=2_000, scale=1.25)
    shorter, longer = record[: len(record) // 2], record
    fast.estimate(longer)
    assert fast.laid(shorter) == whole.laid(shorter)
    fast.estimate(shorter)
    assert fast.laid(list(longer)) == whole.laid(longer)
    fast.estimate(Shared(shorter))
    assert fast.laid(Shared(shorter)) == whole.laid(shorter)  # an equal copy


def test_a_list_grown_in_place_after_its_estimate_is_laid_out_as_it_stands():
    # A list is not kept by identity (review20): the same object grown after its estimate is another view.
    session = generate(rounds=8)
    record = list(session.record)
    fast = Layouts(under(session, ceiling=50_000, caching=True), head=2_000, scale=1.25)
    whole = WholeLayouts(under(session, ceiling=50_000, caching=True), head=2_000, scale=1.25)
    view = record[: len(record) // 2]
    fast.estimate(view)
    view.extend(record[len(record) // 2 :])
    assert fast.laid(view) == whole.laid(record)


@pytest.mark.parametrize("head", [0, 3_000])
def test_a_blocks_position_is_found_in_whichever_chunk_of_the_layout_holds_it(head):
    # Layouts.position searches the last layout's keys a chunk at a time from the end (the last request's tail, what
    # marks() asks for, is among the last blocks): with chunks of four keys, every block of a layout that spans many
    # chunks, and every block that left it, is found where the whole layout's search finds it.
    from foldscope.core.model.shared_start import small_chunks

    session = generate(rounds=12)
    record = list(session.record)
    with small_chunks(2):
        fast = Layouts(under(session, ceiling=50_000, caching=True), head=head, scale=1.25)
        whole = WholeLayouts(under(session, ceiling=50_000, caching=True), head=head, scale=1.25)
        seen: set = set()
        for n in (3, 9, 10, 17, 30, len(record)):
            view = record[:n]
            if n == 17:  # a span folded into a note: the blocks after it are laid again, the folded ones leave
                view = view[:4] + [Message("note", "note", None, {"assistant_response": "folded"})] + view[9:]
            got, want = fast.layout(view, (), None), whole.layout(view, (), None)
            assert (got.keys, got.ends) == (want.keys, want.ends)
            seen.update(want.keys)
            assert len(got.keys) >= 12 or n < 17  # the layouts from the fold on span three chunks or more
            for key in seen:
                assert fast.position(key) == whole.position(key)
                assert fast.marks(key) == whole.marks(key)


def test_a_modelled_rows_cost_is_its_modelled_cost_to_eight_places_and_a_recorded_rows_the_bill():
    from dataclasses import replace

    from foldscope.core.model.pricing import lookup_prices
    from foldscope.core.model.session import Usage
    from foldscope.core.replay.rows import as_billed, request_prices
    from tests.core.replay_sessions import tool_session

    session = tool_session(12, usage=lambda r: Usage(input=1_000 + r, cache_read=50_000, output=10))
    measure = Layouts(under(session, ceiling=30_000), head=0, scale=1.0)
    found = lookup_prices("claude-sonnet-4-5")
    assert found is not None
    prices = replace(found, multiplier=1 / 7, timed=None)  # costs of many decimals: the rounding to eight places shows
    for strategy in STRATEGIES:
        for row in run_strategy(session, strategy, measure, prices).rows:
            request = session.trace[row.request]
            modelled = prices.at(request.at).cost(
                row.modelled_fresh,
                row.modelled_cache_read,
                row.modelled_cache_write - row.modelled_cache_write_1h,
                row.modelled_cache_write_1h,
                row.output if strategy != "recorded" else request.usage.output,
            )
            assert row.modelled_cost_usd == round(modelled, 8), strategy
            if strategy == "recorded":
                assert row.cost_usd == as_billed(request.usage, request_prices(measure.measure, request.model, prices), request.at).cost_usd
            else:
                assert row.cost_usd == row.modelled_cost_usd, strategy
