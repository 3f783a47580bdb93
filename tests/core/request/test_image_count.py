"""Images count as the provider counts them (core.formats.images), once, in every size: never as base64 text."""

from __future__ import annotations

from foldscope.core.formats import claude_code
from foldscope.core.formats.images import image_tokens
from foldscope.core.request.compile import compile_request, counted_text
from foldscope.core.request.count import Counter
from foldscope.core.request.tokens import count_text
from tests.core.formats.test_claude_code_fields import _assistant, _png, _user
from tests.core.reader_checks import write_lines


def image(data: str) -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def session_with_images(tmp_path):
    """A pasted image in a prompt, and a Read of an image file whose tool_result holds the image block, in the
    shape Claude Code writes them (message.content blocks of type image with a base64 source)."""
    pasted, read = _png(800, 600), _png(1568, 784)
    call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/tmp/chart.png"}}
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            _user("u1", None, [{"type": "text", "text": "what is this?"}, image(pasted)]),
            {
                **_assistant("a1", "u1", "m1", "let me look"),
                "message": {
                    "id": "m1",
                    "role": "assistant",
                    "model": "claude-x",
                    "content": [call],
                    "usage": {"input_tokens": 4, "output_tokens": 5},
                },
            },
            _user("u2", "a1", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [image(read)]}]),
            _assistant("a2", "u2", "m2", "a bar chart"),
        ],
    )
    return claude_code.read(path), (pasted, read)


def test_a_request_counts_each_image_by_its_pixels_once(tmp_path):
    session, (pasted, read) = session_with_images(tmp_path)
    view = session.view_messages()
    text = counted_text(compile_request(view, record=session.record))
    assert pasted not in text and read not in text  # the base64 is never sent to the tokenizer
    images = sum(image_tokens(m) for m in view)
    assert images == 640 + 1600  # 800x600 / 750, and 1568x784 / 750 capped at 1,600
    assert Counter().count(view, record=session.record) == count_text(text) + images


def test_the_message_sizes_the_panels_show_hold_the_same_image_tokens(tmp_path):
    from foldscope.core.readout.opening import build_document
    from foldscope.core.request.measure import Measure

    session, _ = session_with_images(tmp_path)
    document = build_document(session, str(tmp_path / "s.jsonl"))
    by_id = {m.id: n for m, n in zip(session.record, document.tokens)}
    composition = Measure(session).parts(session.view_messages())
    parts = dict((m.id, n) for m, n in composition.messages)
    assert parts["u1"] >= 640 and parts["u2"] >= 1600
    # one size for one message (core.readout.message_sizes): the lists' figure is the Composition's, images in it
    assert by_id["u1"] == parts["u1"] >= count_text(session.record.get("u1").text) + 640
    assert by_id["u2"] == parts["u2"]


def test_openai_counts_an_image_by_its_tiles_as_its_documentation_works_the_examples():
    """platform.openai.com/docs/guides/images-vision, "Calculating costs" (GPT-4o): its worked examples."""
    from foldscope.core.formats.images import openai_tokens

    assert openai_tokens((1024, 1024)) == 765  # 768 x 768: four tiles
    assert openai_tokens((2048, 4096)) == 1105  # 768 x 1536: six tiles
    assert openai_tokens((4096, 8192), detail="low") == 85
    assert openai_tokens((1024, 1024), model="gpt-4o-mini") == 2833 + 4 * 5667
    assert openai_tokens(None) == 85 + 8 * 170  # unknown size: the most an image can cost


def test_a_codex_prompt_image_counts_by_openais_rule(tmp_path):
    from foldscope.core.formats import codex
    from tests.core.formats.test_codex import _line, _tokens

    data = _png(1024, 1024)
    # A Codex rollout's pasted image: an input_image content part with a data URL (codex-rs protocol, ContentItem).
    path = write_lines(
        tmp_path / "r.jsonl",
        [
            _line("session_meta", {"id": "x", "base_instructions": {"text": "be brief"}}),
            _line("turn_context", {"model": "gpt-5-codex"}),
            _line(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "what is this?"},
                        {"type": "input_image", "image_url": f"data:image/png;base64,{data}"},
                    ],
                },
            ),
            _line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a chart"}]}),
            _tokens(900),
        ],
    )
    session = codex.read(path)
    prompt = next(m for m in session.record if m.kind == "instruction")
    assert data not in prompt.text
    assert image_tokens(prompt) == 765 and prompt.metadata["images"][0]["rule"] == "openai"
    view = session.view_messages()
    text = counted_text(compile_request(view, record=session.record))
    assert Counter().count(view, record=session.record) == count_text(text) + 765


def test_an_inspect_image_counts_by_its_models_provider_from_its_attachment(tmp_path):
    """Inspect AI's ContentImage ({"type": "image", "image": data URL or attachment://, "detail"}), its data
    kept in the sample's attachments as Inspect writes long strings; an openai/ model counts by tiles."""
    import json

    import pytest

    from foldscope.core.formats import load_session
    from tests.paths import corpus_glob

    found = corpus_glob("inspect/log_read_sample.json")
    if not found:
        pytest.skip("no Inspect log in the corpus")
    document = json.loads(found[0].read_bytes())
    sample = document["samples"][0]
    sample["attachments"]["img1"] = f"data:image/png;base64,{_png(1024, 1024)}"
    for event in sample["events"]:
        if event["event"] == "model":
            event["model"] = "openai/gpt-4o"
    for message in [*sample["messages"], *(m for e in sample["events"] if e["event"] == "model" for m in e["input"])]:
        if message.get("role") == "user":
            message["content"] = [{"type": "text", "text": "look"}, {"type": "image", "image": "attachment://img1"}]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(document))
    session = load_session(path)
    users = [m for m in session.record if m.kind == "instruction" and m.metadata.get("images")]
    assert users and all(image_tokens(m) == 765 for m in users)  # OpenAI's tiles, not the base64


def test_a_pi_image_counts_by_its_pixels_in_a_prompt_and_a_tool_result(tmp_path):
    """pi's ImageContent ({"type": "image", "data": base64, "mimeType"}, pi-mono packages/ai types), in a user
    message and in a read tool's result; an Anthropic model counts width x height / 750."""
    from foldscope.core.formats import pi
    from tests.core.formats.test_pi import HEADER, _assistant, _msg

    pasted, read = _png(800, 600), _png(1568, 784)
    path = write_lines(
        tmp_path / "p.jsonl",
        [
            {**HEADER, "modelId": "claude-sonnet-4-5"},
            _msg("u1", None, "user", [{"type": "text", "text": "see"}, {"type": "image", "data": pasted, "mimeType": "image/png"}]),
            _assistant("a1", "u1", "reading", calls=["t1"]),
            _msg("r1", "a1", "toolResult", [{"type": "image", "data": read, "mimeType": "image/png"}], toolCallId="t1"),
            _assistant("a2", "r1", "a chart"),
        ],
    )
    session = pi.read(path)
    assert image_tokens(session.record.get("u1")) == 640 and image_tokens(session.record.get("r1")) == 1600
    view = session.view_messages()
    text = counted_text(compile_request(view, record=session.record))
    assert pasted not in text and read not in text
    assert Counter().count(view, record=session.record) == count_text(text) + 640 + 1600
