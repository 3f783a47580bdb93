"""The cache model on hand-built layouts whose reads and writes are worked out by hand."""

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.replay.cache_model import (
    CacheRules,
    Layout,
    Mark,
    PrefixCache,
    _common_blocks_after,
    automatic_read,
    chain_keys,
    common_blocks,
    simulate,
)


def layout(blocks, sizes, marks=(), at=None):
    ends, total = [], 0
    for size in sizes:
        total += size
        ends.append(total)
    return Layout(tuple(blocks), tuple(ends), tuple(marks), at)


RULES = CacheRules(mode="marks", min_tokens=0)


def test_first_request_writes_to_its_last_mark_and_the_rest_is_fresh():
    r = layout("abc", [1000, 2000, 500], [Mark(0, "1h"), Mark(1, "5m")], at=0)
    (out,) = simulate([r], RULES)
    assert (out.read, out.write_1h, out.write_5m, out.fresh) == (0, 1000, 2000, 500)
    assert out.change == "first"


def test_append_reads_the_previous_tail_mark_and_writes_what_it_added():
    r0 = layout("ab", [1000, 2000], [Mark(0, "1h"), Mark(1)], at=0)
    r1 = layout("abcd", [1000, 2000, 300, 700], [Mark(0, "1h"), Mark(3)], at=10)
    _, out = simulate([r0, r1], RULES)
    assert (out.read, out.write_5m, out.write_1h, out.fresh) == (3000, 1000, 0, 0)
    assert out.change == "append" and out.rewritten == 0 and out.shared == 3000


def test_a_rewrite_before_the_tail_reads_only_up_to_the_last_mark_inside_the_common_prefix():
    # the fold changed block b: the common prefix is block a, where the 1h mark lies
    r0 = layout("abcd", [1000, 2000, 300, 700], [Mark(0, "1h"), Mark(3)], at=0)
    r1 = layout("aXd", [1000, 100, 700], [Mark(0, "1h"), Mark(2)], at=10)
    _, out = simulate([r0, r1], RULES)
    assert (out.read, out.write_5m, out.fresh) == (1000, 800, 0)
    assert out.change == "rewrite" and out.rewritten == 3000 and out.shared == 1000


def test_tail_growth_without_a_mark_inside_the_common_prefix_reads_nothing_of_it():
    # r0 marked only its stable block; r1 shares all of r0 but can read only to that mark
    r0 = layout("ab", [1000, 2000], [Mark(0, "1h")], at=0)
    r1 = layout("abc", [1000, 2000, 10], [Mark(0, "1h"), Mark(2)], at=1)
    _, out = simulate([r0, r1], RULES)
    assert (out.read, out.write_5m, out.change) == (1000, 2010, "append")


def test_an_entry_expires_after_its_lifetime_and_a_hit_renews_it():
    r0 = layout("ab", [1000, 2000], [Mark(0, "1h"), Mark(1)], at=0)
    late = layout("abc", [1000, 2000, 10], [Mark(0, "1h"), Mark(2)], at=301)
    outs = simulate([r0, late], RULES)
    assert outs[1].read == 1000  # the 5m entry at b lapsed at 300 s; the 1h entry holds
    renewed = [
        layout("ab", [1000, 2000], [Mark(1)], at=0),
        layout("ab", [1000, 2000], [Mark(1)], at=250),  # hit at 250 renews to 550
        layout("ab", [1000, 2000], [Mark(1)], at=500),
    ]
    assert [o.read for o in simulate(renewed, RULES)] == [0, 3000, 3000]


def test_no_timestamps_means_entries_never_lapse():
    outs = simulate([layout("a", [5000], [Mark(0)]), layout("a", [5000], [Mark(0)])], RULES)
    assert outs[1].read == 5000


def test_a_prefix_under_the_minimum_is_not_cached():
    rules = CacheRules(mode="marks", min_tokens=1024)
    r0 = layout("ab", [500, 3000], [Mark(0, "1h"), Mark(1)], at=0)
    r1 = layout("ac", [500, 10], [Mark(0, "1h"), Mark(1)], at=1)
    o0, o1 = simulate([r0, r1], rules)
    # block a alone (500 tokens) is too short: r0 writes it with the 5m entry, r1 cannot read it
    assert (o0.write_1h, o0.write_5m) == (0, 3500)
    assert (o1.read, o1.write, o1.fresh) == (0, 0, 510)


def test_lookback_limits_how_far_before_a_mark_a_hit_is_found():
    rules = CacheRules(mode="marks", min_tokens=0, lookback=2)
    r0 = layout("ab", [100, 100], [Mark(1)], at=0)
    far = layout("abcdef", [100] * 6, [Mark(5)], at=1)
    near = layout("abcd", [100] * 4, [Mark(3)], at=1)
    assert simulate([r0, far], rules)[1].read == 0
    assert simulate([r0, near], rules)[1].read == 200


def test_more_than_four_marks_or_1h_after_5m_is_refused():
    with pytest.raises(ValueError, match="4"):
        simulate([layout("abcde", [1] * 5, [Mark(i) for i in range(5)])], RULES)
    with pytest.raises(ValueError, match="one-hour"):
        simulate([layout("ab", [1, 1], [Mark(0), Mark(1, "1h")])], RULES)


def test_automatic_caching_reads_the_common_prefix_in_128_token_steps_from_1024():
    assert [automatic_read(n, CacheRules.openai()) for n in (0, 1023, 1024, 1151, 1152, 5000)] == [0, 0, 1024, 1024, 1152, 4992]
    r0 = layout("ab", [3000, 2000], at=0)
    r1 = layout("abc", [3000, 2000, 100], at=5)
    r2 = layout("aX", [3000, 40], at=6)
    outs = simulate([r0, r1, r2], CacheRules.openai())
    assert [(o.read, o.write, o.fresh) for o in outs] == [(0, 0, 5000), (4992, 0, 108), (2944, 0, 96)]
    assert [o.change for o in outs] == ["first", "append", "rewrite"]


def test_off_caches_nothing_but_still_counts_rewrites():
    outs = simulate([layout("ab", [10, 10], [Mark(1)]), layout("ac", [10, 10], [Mark(1)])], CacheRules.off())
    assert [(o.read, o.write, o.fresh, o.change) for o in outs] == [(0, 0, 20, "first"), (0, 0, 20, "rewrite")]


def test_reads_plus_writes_plus_fresh_is_the_request():
    cache = PrefixCache(CacheRules(mode="marks", min_tokens=0))
    for i in range(1, 8):
        r = layout("abcdefgh"[:i], [100 * i] * i, [Mark(0, "1h"), Mark(i - 1)] if i > 1 else [Mark(0)], at=i)
        out = cache.step(r)
        assert out.read + out.write + out.fresh == out.tokens and out.fresh >= 0


def test_caching_said_off_models_no_cache_reads_even_where_the_source_cached(corpus_dev, capsys):
    # `--no-caching` (prompt_caching false) places no marks; an Anthropic model then reads nothing from its cache,
    # though the recorded session cached (that is the source's policy, not this one). Unset keeps the source's.
    import json

    from foldscope.core.cli.main import main

    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    totals = {}
    for flag in ("--no-caching", None):
        assert main(["replay", str(path), "--strategy", "none,adr", "--json", *([flag] if flag else [])]) == 0
        result = json.loads(capsys.readouterr().out)
        totals[flag] = {t["strategy"]: t for t in result["totals"]}
        if flag:
            assert "caching off in the policy" in result["cache"]["why"]
    assert all(t["cache_read"] == 0 and t["cache_write"] == 0 for t in totals["--no-caching"].values())
    assert all(t["cache_read"] > 0 for t in totals[None].values())  # the source's caching, modelled, when unset


# One request's blocks after another's: grown at the end, cut back and regrown, or started over; keys are shared
# (a Shared grown from the request before's, as the replay lab lays them out) or a plain tuple.
cache_step = st.tuples(st.sampled_from(["grow", "cut", "fresh"]), st.integers(0, 12), st.booleans(), st.booleans())


class WholeChain(PrefixCache):
    """The reference: every request's prefix identities hashed from its first block, and how much of the previous
    request it shares found by common_blocks over the two whole chains."""

    def step(self, layout):
        prev_chain, prev = list(self._chain), self._previous
        self._previous = None  # so the step hashes the whole chain afresh
        out = PrefixCache.step(self, layout)
        if prev is None:
            return out
        shared = common_blocks(prev_chain, self._chain)
        change = "append" if shared == len(prev_chain) else "rewrite"
        rewritten = prev.tokens - prev.position(shared - 1) if change == "rewrite" else 0
        return msgspec.structs.replace(out, shared=layout.position(shared - 1), change=change, rewritten=rewritten)


@settings(max_examples=200, deadline=None)
@given(st.lists(cache_step, min_size=1, max_size=25), st.sampled_from(["marks", "automatic"]))
def test_the_cache_reads_and_writes_what_hashing_every_prefix_whole_gives(steps, mode):
    from foldscope.core.model import shared_start as sh

    rules = CacheRules(mode=mode, min_tokens=0, auto_min=0, step=1)
    with sh.small_chunks():
        fast, whole = PrefixCache(rules), WholeChain(rules)
        keys: list = []
        kept = sh.Shared()
        made = 0
        for at, (op, n, as_shared, marked) in enumerate(steps):
            if op == "grow":
                new = [f"k{made + i}" for i in range(n + 1)]
                made += n + 1
                cut = len(keys)
            elif op == "cut":
                cut, new = n % (len(keys) + 1), [f"k{made}"]
                made += 1
            else:
                cut, new = 0, [f"f{made + i}" for i in range(n)]
                made += n
            keys = keys[:cut] + new
            kept = kept.grown(cut, new)
            ends = tuple(range(10, 10 * len(keys) + 1, 10))
            marks = (Mark(len(keys) - 1),) if marked and keys and mode == "marks" else ()
            shown = kept if as_shared else tuple(keys)
            got = fast.step(Layout(shown, ends, marks, float(at)))
            want = whole.step(Layout(tuple(keys), ends, marks, float(at)))
            assert got == want
            assert fast._chain == chain_keys(keys)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=12), st.lists(st.integers(0, 3), max_size=12), st.data())
def test_the_blocks_shared_found_past_a_known_start_are_common_blocks_of_the_whole_chains(a, b, data):
    # Chains that agree on a start of d items (the keys before the first that differs), then anything: collisions
    # included (few values), so agreeing again after parting; the same compares as over the whole chains.
    d = data.draw(st.integers(0, min(len(a), len(b))))
    b = a[:d] + b[d:]
    assert _common_blocks_after(d, a[d:], b) == common_blocks(a, b)


def every_candidate(marks, lookback):
    """The block boundaries a read may hit, latest first, as a set of every mark's range sorted (the rule itself)."""
    found = set()
    for m in marks:
        found.update(range(0 if lookback is None else max(0, m.block - lookback), m.block + 1))
    return sorted(found, reverse=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 120), max_size=5), st.sampled_from([None, 0, 1, 5, 20]))
def test_the_candidates_one_at_a_time_are_every_marks_lookback_latest_first(blocks, lookback):
    from foldscope.core.replay.cache_model import _latest_first

    marks = tuple(Mark(b) for b in sorted(blocks))
    assert list(_latest_first(marks, lookback)) == every_candidate(marks, lookback)


def test_a_read_hits_the_latest_live_candidate_when_marks_come_out_of_order():
    first = layout("abcdef", [1000] * 6, [Mark(1), Mark(4)], at=0)
    # the same prefix marked out of order: the read still finds the later mark's prefix (5,000 tokens), not the earlier
    again = layout("abcdefg", [1000] * 7, [Mark(4), Mark(1)], at=1)
    _, out = simulate([first, again], RULES)
    assert out.read == 5000
