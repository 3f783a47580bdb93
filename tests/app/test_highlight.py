"""How the inspector shows a message's content: a result's output first, string arguments with their lines."""

from __future__ import annotations

import json

from foldscope.app.highlight import content_html
from foldscope.app.qt import QTextDocument

PROMPT = "Explore the repo:\n1. the tests\n2. the docs"


def plain(html_text: str) -> str:
    doc = QTextDocument()
    doc.setHtml(html_text)
    return doc.toPlainText()


def test_a_tool_result_opens_on_its_output_then_the_call_that_asked_for_it(qapp):
    """New user 31: on a result the call's Function and Arguments came first and pushed the Output off-screen."""
    content = {"function": "Task", "arguments": {"description": "explore"}, "output": "Done: found 3 modules"}
    text = plain(content_html("action_response", content, "default"))
    assert text.index("Output") < text.index("Function") < text.index("Arguments")
    assert text.index("Done: found 3 modules") < text.index("Function")
    call = plain(content_html("action_request", {"function": "Task", "arguments": {"description": "explore"}}, "default"))
    assert call.index("Function") < call.index("Arguments") and "Output" not in call


def test_a_string_argument_with_line_breaks_shows_its_lines_not_backslash_n(qapp):
    """New user 31: a JSON string argument showed literal \\n; as an object or as JSON text, its lines are lines."""
    for arguments in ({"description": "explore", "prompt": PROMPT}, json.dumps({"description": "explore", "prompt": PROMPT})):
        text = plain(content_html("action_request", {"function": "Task", "arguments": arguments}, "default"))
        assert "\\n" not in text, arguments
        assert "1. the tests\n2. the docs" in text and "Arguments: prompt" in text
        assert '"description": "explore"' in text  # the rest stays JSON


def test_a_json_files_result_that_is_not_json_is_shown_plain_not_lexed_as_json(qapp):
    """Polish 6: an Edit of settings.json answered "<tool_use_error>... validation failed"; lexed as JSON by the file's
    name, the t of "settings" and the f of "failed" came out bold (true, false) and every other letter as an error."""
    from pygments.lexers import JsonLexer, PythonLexer, TextLexer

    from foldscope.app.highlight import guess_lexer

    error = "<tool_use_error>Claude Code settings.json validation failed after edit:\nSettings validation failed:"
    assert isinstance(guess_lexer(error, "/repo/.claude/settings.json"), TextLexer)
    assert isinstance(guess_lexer('     1→{\n     2→  "a": 1\n', "/repo/settings.json"), TextLexer)  # a Read's numbered lines
    assert isinstance(guess_lexer('{"permissions": {"allow": []}}', "/repo/settings.json"), JsonLexer)  # JSON is JSON
    assert isinstance(guess_lexer("def f():\n    return 1\n", "/repo/a.py"), PythonLexer)  # other files keep their lexer
    content = {"function": "Edit", "arguments": {"file_path": "/repo/.claude/settings.json"}, "output": error}
    assert "font-weight: bold" not in content_html("action_response", content, "default").split("Function")[0]
