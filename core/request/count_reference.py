"""The counter's reference: a view's whole plan laid out block by block and counted, never extended from another.

Counter.measure_whole and Counter.pieces use it, and the tests hold the extending layouts (core.request.count_step) to
it. Each function takes the Counter (typed Any: this module is below core.request.count) and notes in its memo what it
counts, through its public seam (Counter.note_extra, Tokenising.count_new), never its private memo.
"""

from __future__ import annotations

from typing import Any

from foldscope.core.request.compile import Plan, canonical, memo_key, render_block, request_head


def whole_layout(counter: Any, plan: Plan, bodies: dict, record, policy, tools, first_round=None, every_body=False) -> list[tuple]:
    """(memo key, body text or None when memoised in `bodies`, the memo of the policy's key; glue text; message) for the
    head and each block, in order."""
    head = request_head(plan, tools)  # the cut before `messages` keeps the tools and system head apart from the turns
    out: list[tuple] = [(("head", head), head, 'messages":[' + ('{"content":[{"' if plan.turns else "]}"), None)]
    for ti, (role, blocks) in enumerate(plan.turns):
        last_turn = ti == len(plan.turns) - 1
        for bi, spec in enumerate(blocks):
            key = memo_key(spec, record, policy, first_round)
            block_type = "tool_use" if spec.tag == "tool_use" else "tool_result" if spec.tag == "tool_result" else "text"
            glue = f'type":"{block_type}"}}'
            body = None
            if every_body or key not in bodies:
                text = canonical(render_block(spec, record, policy, first_round))
                if not (text.startswith('{"') and text.endswith("," + '"' + glue)):
                    raise AssertionError(f"block does not end with its type: {text[:80]}")
                body = text[2 : len(text) - len(glue)]
                counter.note_extra(key, spec)
            if bi < len(blocks) - 1:
                glue += ',{"'
            elif not last_turn:
                glue += f'],"role":"{role}"}},{{"content":[{{"'
            else:
                glue += f'],"role":"{role}"}}]}}'
            out.append((key, body, glue, spec.message))
    return out


def fill_whole(counter: Any, layout: list[tuple], bodies: dict[Any, int]) -> None:
    """Tokenise every new segment of a whole layout (its blocks' into `bodies`, the memo of its policy key)."""
    counter.count_new({key: body for key, body, _, _ in layout if body is not None}, bodies)
