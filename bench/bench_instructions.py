"""Instructions, not seconds: two revisions' work on one generated session, counted by valgrind (issue 17).

This project's machines share their cores with other work: the same replay took 10.5 s and 14.5 s an hour apart,
and a change worth 5% cannot be seen through that. The number of machine instructions a run executes does not depend
on the host's load, so this script counts them (valgrind's callgrind, `I refs`) for the same work under two
revisions, each a `git archive` copy on PYTHONPATH, and prints them side by side with their ratio.

The work is a replay's, apart: `measure` reads the session and calibrates the one Measure (what `replay` does before
its strategies), `strategies` does that and then runs the named strategies one after another; their difference is
the strategies' own. FOLDSCOPE_COUNTING=local keeps every count in the traced process (the counting child would move
tokenising out of what valgrind sees). Under valgrind a run is 50 to 100 times slower: use the 10k sizes.

    .venv/bin/python bench/bench_instructions.py --base 210c617 --shape "short messages" --size 10000

`--inspect` counts `foldscope inspect` of the session instead (the command the million-tiny-lines target times).

`--base` defaults to HEAD and `--head` to the working tree (its files as they are, uncommitted and untracked ones
included; each side a copy compiled to bytecode before it is measured): with no arguments (as
`make bench` runs it) it counts what the working tree's changes do, on 2,000 short messages. Needs valgrind
(Debian's package); without it the script says so and measures nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

# What each run executes in the traced interpreter: the session read and its Measure calibrated as `replay` does it
# (core.replay.layouts.Layouts), then the strategies named in argv[2], if any, each after the one before.
WORK = """
import sys
from argparse import Namespace
from foldscope.core.model import collector
collector.tune()
from foldscope.core.cli.options import read_session, measure_from_args
from foldscope.core.replay import lab
session = read_session(sys.argv[1])
measure = measure_from_args(Namespace(), session)
layouts = lab.Layouts(measure)
rules = lab.cache_rules(measure)[0]
for name in [n for n in sys.argv[2].split(",") if n]:
    lab.run_strategy(session, name, layouts, None, rules)
"""

# With --inspect: `foldscope inspect FILE` as the command line runs it (read, the trace measured with its predictions,
# the summary), the work the million-tiny-lines target times.
INSPECT = """
import sys
from foldscope.core.cli.main import main
sys.exit(main(["inspect", sys.argv[1]]))
"""

COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def export(revision: str | None, into: Path) -> Path:
    """A folder holding the revision's tree as the package `foldscope`, compiled to bytecode (None: the working tree,
    its tracked and untracked files as they are). Both sides are copies compiled alike: a tree whose modules were
    compiled before against one compiled in the run differed by a tenth of the read and measure's instructions."""
    package = into / "foldscope"
    package.mkdir(parents=True)
    if revision is None:
        listed = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"], capture_output=True, check=True
        ).stdout
        names = [n for n in listed.decode().split("\0") if n and (ROOT / n).is_file()]
        archive = subprocess.run(
            ["tar", "-c", "-C", str(ROOT), "--null", "-T", "-"], input="\0".join(names).encode(), capture_output=True, check=True
        ).stdout
    else:
        done = subprocess.run(["git", "-C", str(ROOT), "archive", revision], capture_output=True)
        if done.returncode != 0:
            raise SystemExit(f"bench_instructions: no revision {revision!r} here ({done.stderr.decode().strip()})")
        archive = done.stdout
    subprocess.run(["tar", "-x", "-C", str(package)], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package / "core")], check=True)
    return into


def instructions(path_entry: Path, session: Path, strategies: str, work: str = WORK) -> int:
    """The instructions one run of `work` executes, as callgrind counts them."""
    # FOLDSCOPE_NO_HELPER too: a base older than the one switch (b0db848) read that name instead.
    env = {
        **os.environ,
        "PYTHONPATH": str(path_entry),
        "FOLDSCOPE_COUNTING": "local",
        "FOLDSCOPE_NO_HELPER": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", work, str(session), strategies],
        capture_output=True,
        text=True,
        env=env,
    )
    found = COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        tail = done.stderr.strip().splitlines()[-3:]
        raise SystemExit(f"bench_instructions: the run under valgrind failed: {' / '.join(tail)}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    from bench_scale import SHAPES

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--base",
        default="HEAD",
        help="the revision to compare against (a commit, tag or branch; default HEAD: what the working tree changes)",
    )
    parser.add_argument("--head", default=None, help="the revision compared (default: the working tree)")
    parser.add_argument("--shape", default="short messages", help="one of: " + ", ".join(SHAPES).replace("%", "%%"))
    parser.add_argument(
        "--size", type=int, default=2000, help="messages in the generated session (default 2,000, a few minutes; 10,000 for figures)"
    )
    parser.add_argument("--strategies", default="adr,band,compaction")
    parser.add_argument("--inspect", action="store_true", help="count `foldscope inspect` of the session instead of a replay's work")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        # Not a failure of what is measured: `make bench` runs every bench, and this one needs a tool the project
        # cannot install itself.
        print("bench_instructions: valgrind is not installed (Debian: apt-get install valgrind); nothing measured")
        return 0
    if args.shape not in SHAPES:
        parser.error(f"unknown shape {args.shape!r}")
    make, suffix = SHAPES[args.shape]
    with tempfile.TemporaryDirectory(prefix="foldscope-instructions-") as tmp:
        folder = Path(tmp)
        session = folder / f"session{suffix}"
        make(session, args.size)
        entries = {"base": export(args.base, folder / "base"), "head": export(args.head, folder / "head")}
        if args.inspect:
            counted = {label: instructions(entry, session, "", INSPECT) for label, entry in entries.items()}
            print(f"{args.shape}, {args.size:,} messages; instructions of `inspect` (valgrind's I refs), G = 10^9\n")
            print("| revision | inspect |\n|---|---|")
            print(f"| {args.base} | {counted['base'] / 1e9:.2f} G |\n| {args.head or 'working tree'} | {counted['head'] / 1e9:.2f} G |")
            print(f"| head / base | {counted['head'] / counted['base']:.3f} |")
            return 0
        rows = {}
        for label, entry in entries.items():
            measure = instructions(entry, session, "")
            whole = instructions(entry, session, args.strategies)
            rows[label] = (measure, whole - measure, whole)
    head = args.head or "working tree"
    print(f"{args.shape}, {args.size:,} messages; instructions (valgrind's I refs), G = 10^9\n")
    print(f"| revision | read and measure | strategies ({args.strategies}) | in all |")
    print("|---|---|---|---|")
    for label, name in (("base", args.base), ("head", head)):
        measure, strategies, whole = rows[label]
        print(f"| {name} | {measure / 1e9:.2f} G | {strategies / 1e9:.2f} G | {whole / 1e9:.2f} G |")
    ratios = [rows["head"][i] / rows["base"][i] for i in range(3)]
    print(f"| head / base | {ratios[0]:.3f} | {ratios[1]:.3f} | {ratios[2]:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
