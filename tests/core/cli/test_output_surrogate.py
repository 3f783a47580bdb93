"""Half a surrogate pair in a session's text is printed as its escape: in text, and in JSON where it reads back."""

from __future__ import annotations

import json

from foldscope.core.cli.main import main
from tests.core.request.test_prefix_surrogate import session_file


def test_view_and_read_result_print_half_a_surrogate_pair_as_its_escape(tmp_path, capsys):
    # Found by review7: `view` and `read-result` of a session holding one (a tool's output cut inside an emoji) ended
    # in a UnicodeEncodeError traceback on standard output, in text and in --json alike.
    path = session_file(tmp_path)
    assert main(["view", str(path)]) == 0
    assert "cut \\ud83d here" in capsys.readouterr().out
    assert main(["read-result", str(path), "--index", "3"]) == 0
    assert "cut \\ud83d here" in capsys.readouterr().out
    assert main(["read-result", str(path), "--index", "3", "--json"]) == 0
    out = capsys.readouterr().out
    assert "\\ud83d" in out and "cut \ud83d here" in json.dumps(json.loads(out), ensure_ascii=False)  # the same text back
