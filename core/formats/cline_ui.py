"""Cline's panel messages read as what was sent when the API history is missing (core.formats.cline's read_ui_only)."""

from __future__ import annotations

import json
import re
from typing import Any

# ClineSayTool's tools whose `content` is the panel's, not the call's: the absolute path read or listed, or the
# results found (the next request's result carries them); an edit's content (its diff, the file written) is the call's.
_PANEL_CONTENT = {"readFile", "listFilesTopLevel", "listFilesRecursive", "listCodeDefinitionNames", "searchFiles"}


def ui_call(kind: str, text: str) -> tuple[str, dict[str, Any]]:
    """A ui tool, command or MCP message as the call it made (name, arguments): a "tool" message names its tool
    (ClineSayTool.tool: readFile, editedExistingFile) and its fields are the arguments, less what only the panel shows
    (operationIsLocatedInWorkspace, and a read's or search's `content`: what the model wrote, not its output); a
    command is a command."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = text
    fields = value if isinstance(value, dict) else {"input": value}
    tool = fields.get("tool")
    if kind != "tool" or not isinstance(tool, str):
        return kind, fields
    panel = {"operationIsLocatedInWorkspace", *(("content",) if tool in _PANEL_CONTENT else ())}
    return tool, {k: v for k, v in fields.items() if k not in panel}


# The head of a text block that is a tool's result written as text (core.formats.cline._TEXT_RESULT), where one of the blocks Cline joins
# with blank lines into a ui request's text begins: the start of the text, or after a blank line.
_RESULT_BLOCK = re.compile(r"(?:^|(?<=\n\n))(?:\[[\w-]+(?: for [^\n]*?)?\] Result:|Tool \[[\w-]+\] was not executed)")
_ENVIRONMENT = "\n\n<environment_details>"  # the block Cline adds last to every request's user content


def split_results(request: str, calls: int) -> tuple[list[str], str]:
    """A ui request's text as the results it opens with, one for each of the `calls` the response before made (in
    order; each from its "[tool for 'x'] Result:" block to the next one's or to the blocks after the results), and
    the rest (the text before them and after: feedback, the environment details) with its blank lines as written."""
    env = request.rfind(_ENVIRONMENT)
    end = len(request) if env < 0 else env + 2  # where the environment details' block begins
    starts = [m.start() for m in _RESULT_BLOCK.finditer(request, 0, end)]
    used = starts[:calls]
    if not used:
        return [], request
    bounds = [*used, starts[len(used)] if len(starts) > len(used) else end]
    # each block but the last is followed by the blank line that joins it to the next: not its text
    results = [request[a:b][: -2 if b < len(request) else None] for a, b in zip(bounds, bounds[1:])]
    rest = [request[: used[0]][:-2], request[bounds[-1] :]]
    return results, "\n\n".join(p for p in rest if p)
