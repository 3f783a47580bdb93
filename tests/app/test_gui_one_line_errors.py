"""The GUI's flags refuse a bad value in one line, as the commands do (core.cli.output.Parser)."""

from __future__ import annotations

import pytest


def test_the_gui_flags_refuse_in_one_line_too(capsys):
    from foldscope.app.gui import build_parser  # argparse only: no Qt is imported

    with pytest.raises(SystemExit):
        build_parser().parse_args(["--size", "big"])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'big' is not WIDTHxHEIGHT" in err and "usage:" not in err
