"""lionagi's messages as the prediction counts them: the text lionagi renders into the prompt, read against the
payloads its logs kept and the usage the provider reported for them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldscope.core.formats import load_session
from foldscope.core.formats.lionagi_prompt import prompt_text
from foldscope.core.model.session import new_message
from foldscope.core.request.provider_text import prompt_renderer, provider_text
from foldscope.core.request.trace_measure import measure_trace
from tests.paths import CORPUS

LION = "lionagi.protocols.messages.instruction.Instruction"


def _cookbooks() -> list[Path]:
    found = sorted((CORPUS / "dev/lionagi").glob("cookbook_*.branch.json"))
    if not found:
        pytest.skip("no lionagi cookbook Branch in the dev corpus")
    return found


def _sent(path: Path) -> list[list[str]]:
    """Each logged call's payload: the texts its messages sent, as lionagi's APICalling kept them."""
    logs = json.loads(path.read_text())["logs"]["collections"]
    return [[m["content"] for m in log["content"]["payload"]["messages"]] for log in logs]


def test_each_lionagi_instruction_and_answer_sent_is_the_text_its_logged_payload_holds():
    for path in _cookbooks():
        sent = {text for payload in _sent(path) for text in payload}
        session = load_session(path)
        checked = 0
        for request in session.trace:
            for mid in request.view:
                message = session.record.get(mid)
                if message.kind in ("instruction", "assistant"):
                    assert provider_text(message, prompt_text) in sent, (path.name, mid)
                    checked += 1
        assert checked >= 3, path


def test_an_instructions_guidance_and_context_are_rendered_under_lionagis_headings():
    content = {"guidance": "Be brief.", "instruction": "Rate it.", "context": [{"joke": {"prompt": "p", "response": "r"}}, "plain"]}
    message = new_message("m1", "instruction", None, content, {"lion_class": LION}, "f", 0)
    assert provider_text(message, prompt_text) == (
        "## GUIDANCE:\n\n  Be brief.\n\n## INSTRUCTION:\n\n  Rate it.\n\n## CONTEXT:\n\n"
        "  -\n    - joke:\n      - prompt: p\n      - response: r\n  - plain"
    )
    other = new_message("m2", "instruction", None, {"instruction": "Rate it."}, {}, "f", 0)
    assert provider_text(other, prompt_text) == "Rate it."  # another reader's instruction: its text


def test_the_predicted_input_of_each_lionagi_request_is_within_15_tokens_or_10_percent_of_the_reported():
    # Was 81% under on the critic's first request (31 predicted, 166 reported): the context was not counted.
    # What is left: lionagi 0.14 sends the system message inside the first instruction's guidance, once in the
    # first request and twice after it, where foldscope counts it once as a message of its own.
    rows = []
    for path in _cookbooks():
        session = load_session(path)
        report = measure_trace(session)
        for i, request in enumerate(session.trace):
            if request.usage is not None:
                rows.append((path.name, i, report.rows[i].predicted, request.usage.reported_input))
    assert len(rows) >= 7
    for name, i, predicted, reported in rows:
        assert abs(predicted - reported) <= max(15, 0.1 * reported), (name, i, predicted, reported)


def test_a_branch_exported_from_another_agents_session_is_predicted_as_that_agent_sent_it(corpus_dev, tmp_path):
    """An export keeps the source's format in its manifest: Codex sent those requests, not lionagi, so an
    instruction is read as its text, and every request's predicted input equals the source file's."""
    from foldscope.core.formats.lionagi_write import write_session

    path = next(iter(sorted((corpus_dev / "codex").glob("rollout-*.jsonl"))), None)
    if path is None:
        pytest.skip("no Codex rollout in the dev corpus")
    source = load_session(path)
    write_session(source, tmp_path / "out.json")
    exported = load_session(tmp_path / "out.json")
    assert exported.format == "lionagi" and prompt_renderer(exported) is None
    assert all(prompt_renderer(load_session(p)) is prompt_text for p in _cookbooks())
    assert [r.predicted for r in measure_trace(exported).rows] == [r.predicted for r in measure_trace(source).rows]
