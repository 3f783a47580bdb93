"""The encoder's builder (core.request.counting.builder): a child it forks counts as this process's own encoder does, is
its to reap, not the asker's, and is niced as its asker; where it is gone, the asker counts with its own encoder."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# A fresh process, as the replay is: the builder started, then what the argument asks, its answer as JSON on stdout.
SCRIPT = """
import json, os, sys
from foldscope.core.request import tokens
from foldscope.core.request.counting import builder, child
texts = ["hello world", "def f(x):\\n    return x  # 3\\u00e9\\u4e2d\\u6587", " " * 40 + "tail", "x" * 5000]
assert builder.start()
got = {"built_here": None}
if sys.argv[1] == "counts":
    got["served"] = tokens.count_ordinary_batch(texts) + [tokens.count_text(t) for t in texts]
    started = builder.served()
    got["pid_not_mine"] = True
    try:
        os.waitpid(started.process.pid, os.WNOHANG)
        got["pid_not_mine"] = False
    except ChildProcessError:
        pass
    child.stop(started)
if sys.argv[1] == "gone":
    os.kill(builder._builder.pid, 9)
    os.waitpid(builder._builder.pid, 0)
    builder._builder.pid = None
    got["served"] = [tokens.count_text(t) for t in texts]
if sys.argv[1] == "nice":
    got["asker"] = os.nice(5)
    started = builder.served()
    with open(f"/proc/{started.process.pid}/stat") as stat:
        got["nice"] = int(stat.read().rsplit(")", 1)[1].split()[16])
    child.stop(started)
if sys.argv[1] == "held":  # a child whose asker never lets go (a run stopped partway): stop ends all the same
    held = builder.served()
    held.process.pid
    builder.CLOSE_SECONDS = 0.2
    pid = builder._builder.pid
got["built_here"] = tokens.encoder_built()
builder.stop()
if sys.argv[1] == "held":
    try:
        os.waitpid(pid, os.WNOHANG)
        got["builder_reaped"] = False
    except ChildProcessError:
        got["builder_reaped"] = True
got["local"] = [tokens.local_encoding().count(t) for t in texts]
print(json.dumps(got))
"""


def _run(how: str, timeout: float = 300) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "FOLDSCOPE_COUNTING"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, how], capture_output=True, text=True, env=env, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_child_the_builder_forks_counts_as_this_process_would_and_is_not_this_processs_to_reap():
    got = _run("counts")
    assert got["served"] == got["local"] * 2
    assert got["built_here"] is False and got["pid_not_mine"] is True


def test_where_the_builder_is_gone_the_asker_counts_with_its_own_encoder():
    got = _run("gone")
    assert got["served"] == got["local"] and got["built_here"] is True


def test_a_child_the_builder_forks_is_niced_as_its_asker():
    if not os.path.exists("/proc/self/stat"):
        return
    got = _run("nice")
    assert got["nice"] == got["asker"] > 0


def test_stop_ends_a_builder_whose_child_an_asker_still_holds():
    # the builder waits for its children, which end as their askers let go: one that never does is not waited for ever
    assert _run("held", timeout=120)["builder_reaped"] is True
