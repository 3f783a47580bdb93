"""The compactions' literal checks alone, an older checkout's against this one's, alternated in one process (issue 48).

`compactions` and `report` check each compaction's dropped texts for the literals its summary lost
(core.forensics.literals.check: each span's candidate literals until MAX_LITERALS, each looked up in the summary);
at 50,000 messages that is 151 spans and about 3 s of CPU, made in a niced child that falls behind on a busy machine.
This reads FILE once, takes every span's texts and summary as the commands do (core.forensics.compactions.literal_spans),
then times `check` over all of them with the old checkout's literals module (--before: a `git archive` of a commit
unpacked into DIR/foldscope; pass DIR/foldscope) and this one's, in turn, --rounds times, each by CPU
(time.process_time). Every check of both must hold the same literals, kinds and kept marks, or it stops. Prints each
round, the least of each and the ratio this / before.

    .venv/bin/python bench/bench_literals.py FILE --before DIR/foldscope [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foldscope.core.cli.options import read_session  # noqa: E402
from foldscope.core.forensics import literals as this_tree  # noqa: E402
from foldscope.core.forensics.compactions import literal_spans  # noqa: E402


def module_at(tree: Path) -> ModuleType:
    """The literals module of another checkout, loaded beside this one's (it imports nothing of foldscope)."""
    spec = importlib.util.spec_from_file_location("before_literals", tree / "core" / "forensics" / "literals.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(module: ModuleType, spans: list[tuple[list[str], str]]) -> tuple[float, list[tuple[str, bytes, bytes]]]:
    start = time.process_time()
    made = [module.check(texts, summary) for texts, summary in spans]
    return time.process_time() - start, [c.parts() for c in made]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", type=Path)
    ap.add_argument("--before", type=Path, required=True, help="an older checkout's foldscope folder (a git archive)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)

    session = read_session(str(args.file))
    spans = [([sp.text_of(m) for m in sp.dropped], sp.note.text) for sp in literal_spans(session)]
    chars = sum(len(t) for texts, _ in spans for t in texts)
    print(f"session: {len(session.trace)} requests, {len(spans)} compactions, {chars:,} characters dropped")
    before = module_at(args.before)
    times: dict[str, list[float]] = {"before": [], "this": []}
    for r in range(1, args.rounds + 1):
        order = [("before", before), ("this", this_tree)] if r % 2 else [("this", this_tree), ("before", before)]
        made = {}
        for name, module in order:
            seconds, made[name] = timed(module, spans)
            times[name].append(seconds)
        if made["before"] != made["this"]:
            print("the two checkouts' checks differ: nothing measured")
            return 1
        print(f"round {r}: before {times['before'][-1]:.3f} s CPU, this {times['this'][-1]:.3f} s CPU")
    literals = sum(len(k) for _, _, k in made["this"])
    least = {name: min(ts) for name, ts in times.items()}
    ratio = least["this"] / least["before"] if least["before"] else float("nan")
    print(f"literal checks: {literals:,} literals; least CPU before {least['before']:.3f} s, this {least['this']:.3f} s")
    print(f"this / before: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
