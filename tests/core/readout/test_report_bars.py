"""The report's bars hear each request going on from the request before (core.readout.report_bars.RequestBars): each
bar is what composition.summed_figures makes of Measure.parts_of(m, head=0), reading every block of the measurement."""

import sys
from pathlib import Path

import pytest

from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.readout.composition import MessageFacts, summed_figures
from foldscope.core.readout.report_bars import RequestBars
from foldscope.core.request.measure import Measure

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A generated Claude Code session that repeats nothing, with compactions (bench/fresh_session.py)."""
    from fresh_session import generate

    path = tmp_path_factory.mktemp("fresh") / "s.jsonl"
    generate(path, 1500)
    return path


def _heard_against_every_block(path: Path, policy: Policy) -> tuple[int, int, int]:
    """Every measurement of the trace's count heard in turn, each bar held equal to summed_figures of parts_of's
    reading of it; how many were heard, how many went on from the one before, and how many dropped blocks."""
    measure = Measure(load_session(path), policy)
    bars = RequestBars(measure)
    went_on, dropped = [], []

    def heard(messages, first_round, m, meter) -> None:
        kept = bars.kept(m)
        went_on.append(kept > 0)
        dropped.append(0 < kept < len(bars._owners))
        bars.hear(m)
        parts = measure.parts_of(m, head=0)
        names, figures, thinking = summed_figures(parts, MessageFacts(remember=False))
        k = len(bars) - 1
        assert bars._names[k] == names and list(bars._figures[k]) == figures
        assert bars._heads[k] == (parts.system, parts.tools, parts.framing, thinking)

    measure.calibrate(on_measured=heard)
    return len(went_on), sum(went_on), sum(dropped)


@pytest.mark.parametrize(
    "policy",
    [Policy(), Policy(prompt_caching=True), Policy(prompt_caching=True, tool_result_max_chars=2000)],
    ids=["default", "caching", "caching and a result bound"],
)
def test_each_bar_heard_going_on_from_the_request_before_is_the_one_every_block_sums_to_on_a_generated_session(generated, policy):
    heard, went_on, _ = _heard_against_every_block(generated, policy)
    assert heard > 100 and went_on > heard * 0.8  # most requests go on from the one before: the path this holds


@pytest.mark.parametrize(
    "name", ["claude_code/session-196820da.jsonl", "claude_code/extracted-dd381a75.jsonl", "codex", "pi/pi-mono_large-session.jsonl"]
)
def test_each_bar_heard_going_on_from_the_request_before_is_the_one_every_block_sums_to_on_dev_files(corpus_dev, name):
    path = corpus_dev / name if name != "codex" else sorted((corpus_dev / "codex").glob("*.jsonl"))[0]
    for policy in (Policy(), Policy(prompt_caching=True)):
        heard, went_on, _ = _heard_against_every_block(path, policy)
        assert heard > 0 and went_on > 0


class _Laid:
    marked: dict = {}


class _Measured:
    """A measurement as RequestBars reads it: its serial, the one it went on from, the parts it kept, its count."""

    def __init__(self, serial, since, kept, owners, bodies, count) -> None:
        self.serial, self.since, self.kept, self.owners, self.bodies, self.count = serial, since, kept, owners, bodies, count
        self.laid = _Laid()


class _Blocks:
    """Measure's blocks_of and head_of over _Measured stand-ins."""

    def blocks_of(self, m, start=0):
        return list(m.owners[start:]), list(m.bodies[start:])

    def head_of(self, m):
        return 7, 11


def test_a_message_with_two_blocks_in_a_view_counts_once_and_its_blocks_tokens_add_up(tmp_path):
    """The rule by_message holds for parts_of: a message's blocks, wherever they lie in the view, are one message of
    its category with their tokens summed, its thinking counted once; what leaves takes out only what it added."""
    from foldscope.core.model.session import Message
    from foldscope.core.request.measure import Composition, by_message

    said = Message("a", "assistant", None, {"assistant_response": "x"}, {"thinking": "abcd"})
    asked = Message("i", "instruction", None, {"instruction": "y"})
    ran = Message("r", "action_response", None, {"function": "Read", "output": "z"})
    views = [
        ([said, asked, said], [5, 3, 2]),  # the assistant's message twice: one message, 7 tokens, 4 of thinking
        ([said, asked, said, ran], [5, 3, 2, 9]),  # kept whole, a result added
        ([said, ran], [5, 9]),  # its second block left, and the instruction's category with it
        ([ran, said, ran], [9, 5, 4]),
        ([ran, said, asked], [9, 6, 3]),  # the same message laid out again with other tokens: taken out and added anew
    ]
    bars = RequestBars(_Blocks())
    for serial, (owners, bodies) in enumerate(views):
        kept = {1: 4, 2: 2, 3: 1, 4: 2}.get(serial, 0)  # the head part, then the blocks the one before shares
        bars.hear(_Measured(serial, serial - 1, kept, owners, bodies, 100))
        parts = Composition(7, 11, 0, by_message(owners, bodies), 100 - 18 - sum(bodies))
        names, figures, thinking = summed_figures(parts, MessageFacts(remember=False))
        assert bars._names[serial] == names and list(bars._figures[serial]) == figures
        assert bars._heads[serial] == (7, 11, parts.framing, thinking)
    assert bars._heads[0][3] == 4 and list(bars._figures[0][2:4]) == [7, 1]
