"""Random action sequences hold the record, view and undo invariants (hypothesis stateful testing).

Restore, evict, clip, compact, peek, expand, read_result, the fold, undo and redo in any order and depth,
over the demo and real dev corpus sessions. After every step: the record only grows and never changes;
the view is in the record, without duplicates, in chronological order; one form per original result; every
call in the view has its result and no result lacks its call, and the compiled request pairs every tool_use
with its tool_result; undo and redo are exact over many levels; refused actions and peek/read_result change
nothing (read_result only protects the original from the next clip, Amendment 2). The hypothesis profile
`soak` (`make soak`) runs many more sequences than CI's default.
"""

from __future__ import annotations

import copy
import itertools
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as hs
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from foldscope.core.actions.commands import ApplyFold, Clip, CommandStack, Compact, Evict, Expand, Restore
from foldscope.core.actions.recovery import Peek, ReadResult
from foldscope.core.fold import stages as st
from foldscope.core.fold.clip import original_of
from foldscope.core.fold.delivery import NO_CLIP_KEY
from foldscope.core.fold.fold import Fold
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session
from foldscope.core.request.compile import compile_request
from foldscope.core.request.count import Counter
from foldscope.core.request.measure import Measure

# The machine's own profiles, built on the suite's (tests/conftest.py): under CI=true that one draws the same
# examples every run, so the count of actions below is the same on every landing; elsewhere it is random.
SUITE = settings.get_profile("ci") if os.environ.get("CI") == "true" else settings.default
QUICK = settings(
    SUITE, stateful_step_count=40, max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
SOAK = settings(
    SUITE,
    stateful_step_count=100,
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = {"ci": QUICK, "soak": SOAK}[os.environ.get("FOLDSCOPE_HYPOTHESIS", "ci")]
# Hypothesis ends a run early when its steps stop finding new behaviour, so a random run's count varies
# (490 to 600 of the 1,000 the quick profile allows were seen): the floor holds "several hundred" with margin.
FLOOR = 300

# Real sessions with tool rounds: Claude Code (one with its own compaction in the record), Codex and pi.
REAL = [
    "claude_code/subagent.jsonl",
    "claude_code/extracted-dd381a75.jsonl",
    "codex/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl",
    "pi/earendil-works-pi_prompt-cache-replay-session.jsonl",
]
STEPS = [0]  # steps run in this process, so the test can say how many it checked


def unprotected(state: tuple) -> tuple:
    """A state without read_result's clip protection, which a read adds outside the undo stack."""
    view, metadata, manifest, scale = state
    return view, {k: v for k, v in metadata.items() if k != NO_CLIP_KEY}, manifest, scale


def state_of(session: Session) -> tuple:
    """What undo and redo put back: the view, branch metadata, manifest and scale."""
    return (list(session.view), copy.deepcopy(session.branch_metadata), copy.deepcopy(session.manifest), session.scale)


def record_fingerprint(session: Session) -> list[tuple[str, str]]:
    return [(m.id, m.sha256()) for m in session.record]


def check_view(session: Session) -> None:
    record = session.record
    view = session.view
    assert all(mid in record for mid in view), "the view holds an id the record lacks"
    assert len(set(view)) == len(view), "the view holds a message twice"
    messages = session.view_messages()
    keys = [st.chronology_key(m, record) for m in messages]
    assert keys == sorted(keys), f"the view is out of chronological order: {keys}"
    originals = [original_of(m, record).id for m in messages if m.kind == "action_response"]
    assert len(set(originals)) == len(originals), "an original and its copy (or two copies) stand in the view together"
    facts = st.view_facts(messages, record, set())
    for m in messages:  # a result whose call is out of the view compiles as text (compile's ORPHAN_RESULT)
        if m.kind == "action_request":
            result = m.content.get("action_response_id")
            if isinstance(result, str) and result in record:  # a result the file never held is unseen, not missing
                assert m.id in facts.result_of, f"call {record.index_of(m.id)} stands without its result"


def check_compiled_pairs(session: Session) -> None:
    """Every tool_use in the compiled request has its tool_result in the next message, and no result lacks its call."""
    messages = compile_request(session.view_messages(), record=session.record)["messages"]
    for i, message in enumerate(messages):
        content = message["content"] if isinstance(message["content"], list) else []
        for block in content:
            if block.get("type") == "tool_use":
                following = messages[i + 1]["content"] if i + 1 < len(messages) else []
                assert any(
                    b.get("type") == "tool_result" and b.get("tool_use_id") == block["id"] for b in following if isinstance(b, dict)
                ), f"tool_use {block['id']} has no result"
            if block.get("type") == "tool_result":
                before = messages[i - 1]["content"] if i else []
                assert any(b.get("type") == "tool_use" and b.get("id") == block["tool_use_id"] for b in before if isinstance(b, dict)), (
                    f"tool_result {block['tool_use_id']} has no call"
                )


class ActionSequences(RuleBasedStateMachine):
    """One session, one command stack, and a model of the undo history to check it against."""

    path: Path

    def __init__(self) -> None:
        super().__init__()
        self.session = load_session(self.path)
        self.stack = CommandStack(self.session)
        self.ids = (f"t{n}" for n in itertools.count())
        self.counter = Counter()
        self.fingerprint = record_fingerprint(self.session)
        self.done: list[tuple[tuple, tuple]] = []  # (state before, state after) per command on the stack
        self.undone: list[tuple[tuple, tuple]] = []
        check_view(self.session)

    # -- picking targets ------------------------------------------------------------------------
    def pick(self, n: int, pool: list[int]) -> int:
        return pool[n % len(pool)] if pool else n % len(self.session.record)

    def indices(self, kinds: tuple[str, ...] = (), in_view: bool = False) -> list[int]:
        record = self.session.record
        source = self.session.view_messages() if in_view else list(record)
        return [record.index_of(m.id) for m in source if not kinds or m.kind in kinds]

    def do(self, command) -> None:
        STEPS[0] += 1
        before = state_of(self.session)
        length = len(self.session.record)
        changes = self.stack.do(command)
        after = state_of(self.session)
        if not changes.success:
            assert after == before and len(self.session.record) == length, f"a refused {command.label} changed the session"
        if command.undoable and changes.success and (changes.view or changes.added or changes.metadata or changes.folds):
            self.done.append((before, after))
            self.undone.clear()

    # -- rules ------------------------------------------------------------------------------------
    @rule(n=hs.lists(hs.integers(0, 10**6), min_size=1, max_size=3))
    def restore(self, n):
        fold = Fold(self.session, self.measure())
        self.do(Restore([self.pick(k, []) for k in n], fold.fits))

    @rule(n=hs.lists(hs.integers(0, 10**6), min_size=1, max_size=3))
    def evict(self, n):
        pool = self.indices(in_view=True)
        self.do(Evict([self.pick(k, pool) for k in n]))

    @rule(n=hs.integers(0, 10**6), keep=hs.integers(0, 3_000))
    def clip(self, n, keep):
        self.do(Clip(self.pick(n, self.indices(("action_response",))), keep, new_id=lambda: next(self.ids), clock=lambda: 0.0))

    @rule(a=hs.integers(0, 10**6), b=hs.integers(0, 10**6))
    def compact(self, a, b):
        pool = self.indices(in_view=True)
        self.do(Compact(self.pick(a, pool), self.pick(b, pool), summary="what was done", new_id=lambda: next(self.ids), clock=lambda: 0.0))

    @rule(n=hs.integers(0, 10**6))
    def expand(self, n):
        self.do(Expand(self.pick(n, self.indices(("note",)))))

    @rule(n=hs.integers(0, 10**6))
    def peek(self, n):
        before, length = state_of(self.session), len(self.session.record)
        self.stack.do(Peek(self.pick(n, self.indices(("note",)))))
        assert state_of(self.session) == before and len(self.session.record) == length

    @rule(n=hs.integers(0, 10**6), offset=hs.integers(0, 5_000), limit=hs.integers(1, 20_000))
    def read_result(self, n, offset, limit):
        before, length = state_of(self.session), len(self.session.record)
        changes = self.stack.do(ReadResult(self.pick(n, self.indices(("action_response",))), offset, limit))
        view, metadata, manifest, scale = state_of(self.session)
        assert (view, manifest, scale) == (before[0], before[2], before[3]) and len(self.session.record) == length
        was = {k: v for k, v in before[1].items() if k != NO_CLIP_KEY}
        assert {k: v for k, v in metadata.items() if k != NO_CLIP_KEY} == was  # only the read's clip protection
        if not changes.success:
            assert metadata == before[1]

    @rule()
    def fold(self):
        fold = Fold(self.session, self.measure(), clock=lambda: 0.0, new_id=lambda: next(self.ids))
        self.do(ApplyFold(fold))

    @precondition(lambda self: self.done)
    @rule()
    def undo(self):
        before, after = self.done.pop()
        assert unprotected(state_of(self.session)) == unprotected(after)
        self.stack.undo()
        assert state_of(self.session) == before, "undo did not put the session back exactly"
        self.undone.append((before, after))

    @precondition(lambda self: self.undone)
    @rule()
    def redo(self):
        before, after = self.undone.pop()
        assert unprotected(state_of(self.session)) == unprotected(before)
        self.stack.redo()
        assert state_of(self.session) == after, "redo did not put the session forward exactly"
        self.done.append((before, after))

    # -- invariants ---------------------------------------------------------------------------------
    @invariant()
    def the_record_only_grows_and_never_changes(self):
        now = record_fingerprint(self.session)
        assert now[: len(self.fingerprint)] == self.fingerprint
        self.fingerprint = now

    @invariant()
    def the_view_is_in_the_record_in_order_once_with_calls_and_results_paired(self):
        check_view(self.session)

    @invariant()
    def the_compiled_request_pairs_every_call_with_its_result(self):
        check_compiled_pairs(self.session)

    @invariant()
    def the_stack_matches_the_model(self):
        assert self.stack.can_undo == bool(self.done) and self.stack.can_redo == bool(self.undone)

    @property
    def ceiling(self) -> int:
        return self._ceiling

    def measure(self) -> Measure:
        """The session's Measure under this machine's ceiling, sharing one counter across steps."""
        return Measure(self.session, Policy(max_input_tokens=self.ceiling), counter=self.counter)


def machine_for(path: Path) -> type[ActionSequences]:
    """A machine over one file, with a ceiling at 70% of its first view's estimate so the fold has work."""
    session = load_session(path)
    probe = Fold(session, Measure(session, Policy(max_input_tokens=10**9)))
    ceiling = max(1_000, int(probe.estimate() * 0.7))
    return type(f"Sequences_{path.stem[:20]}", (ActionSequences,), {"path": path, "_ceiling": ceiling})


def run(path: Path) -> int:
    """Run the machine over one file under the profile; returns the number of actions it took."""
    machine = machine_for(path)
    machine.TestCase.settings = PROFILE
    start = STEPS[0]
    machine.TestCase().runTest()
    return STEPS[0] - start


def test_random_action_sequences_hold_the_invariants_on_the_demo():
    assert run(demo_path()) >= FLOOR  # several hundred actions per file, several thousand over the files


@pytest.mark.parametrize("name", REAL)
def test_random_action_sequences_hold_the_invariants_on_a_real_session(corpus_dev, name):
    assert run(corpus_dev / name) >= FLOOR
