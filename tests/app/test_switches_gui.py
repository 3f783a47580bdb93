"""The GUI goes through the same start as every command: a switch set to a value it does not take is said in one line
on stderr (core.model.environment), and the window still opens."""

from __future__ import annotations

import os
import subprocess
import sys

from foldscope.core.formats.demo import demo_path


def test_the_window_opens_after_saying_a_switch_set_to_a_value_it_does_not_take(tmp_path):
    png = tmp_path / "demo.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "FOLDSCOPE_COUNTING": "chid", "FOLDSCOPE_TOKENISER": "tiktoken"}
    done = subprocess.run(
        [sys.executable, "-m", "foldscope", "--screenshot", str(png), str(demo_path())],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert png.stat().st_size > 0
    said = [line for line in done.stderr.splitlines() if line.startswith("foldscope: FOLDSCOPE_")]
    assert said == [
        "foldscope: FOLDSCOPE_COUNTING='chid' is not one of local, child: using child (the default)",
        "foldscope: FOLDSCOPE_TOKENISER is not a switch foldscope reads (ignored): did you mean FOLDSCOPE_TOKENIZER?",
    ]
    assert "Traceback" not in done.stderr
