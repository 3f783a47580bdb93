"""The report's bars hear each request's blocks going on from the request before (core.readout.report_bars.HeardBlocks):
the parts are the ones Measure.parts_of reads from every block of the measurement."""

import sys
from pathlib import Path

import pytest

from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.readout.report_bars import HeardBlocks
from foldscope.core.request.measure import Measure

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A generated Claude Code session that repeats nothing, with compactions (bench/fresh_session.py)."""
    from fresh_session import generate

    path = tmp_path_factory.mktemp("fresh") / "s.jsonl"
    generate(path, 1500)
    return path


def _heard_against_parts_of(path: Path, policy: Policy) -> tuple[int, int]:
    """Every measurement of the trace's count heard in turn, each held equal to parts_of's reading of it; how many
    were heard and how many went on from the one before."""
    measure = Measure(load_session(path), policy)
    blocks = HeardBlocks(measure)
    went_on = []

    def heard(messages, first_round, m, meter) -> None:
        went_on.append(blocks.kept(m) > 0)
        assert blocks.parts(m) == measure.parts_of(m, head=0)

    measure.calibrate(on_measured=heard)
    return len(went_on), sum(went_on)


@pytest.mark.parametrize(
    "policy",
    [Policy(), Policy(prompt_caching=True), Policy(prompt_caching=True, tool_result_max_chars=2000)],
    ids=["default", "caching", "caching and a result bound"],
)
def test_the_blocks_heard_going_on_from_the_request_before_are_the_parts_every_block_gives_on_a_generated_session(generated, policy):
    heard, went_on = _heard_against_parts_of(generated, policy)
    assert heard > 100 and went_on > heard * 0.8  # most requests go on from the one before: the path this holds


@pytest.mark.parametrize(
    "name", ["claude_code/session-196820da.jsonl", "claude_code/extracted-dd381a75.jsonl", "codex", "pi/pi-mono_large-session.jsonl"]
)
def test_the_blocks_heard_going_on_from_the_request_before_are_the_parts_every_block_gives_on_dev_files(corpus_dev, name):
    path = corpus_dev / name if name != "codex" else sorted((corpus_dev / "codex").glob("*.jsonl"))[0]
    for policy in (Policy(), Policy(prompt_caching=True)):
        heard, went_on = _heard_against_parts_of(path, policy)
        assert heard > 0 and went_on > 0
