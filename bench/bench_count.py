"""Counting benchmark: a 1,000,000-token generated view, counted whole against raw tiktoken, and re-estimated after one edit.

Run: .venv/bin/python bench/bench_count.py [--tokens N] [--repeat R]
Prints the two ratios DESIGN.md's Targets name, each against a baseline measured in the same run:
  throughput = raw encode_ordinary time / our cold count time  (target 0.8 or better)
  re-estimate = our count after one message changes / our cold count time  (target under 0.05)
and our cold count against each exact o200k counter installed, each counting the whole counted text in one call
(tiktoken, quicktok, bpe-openai, riptoken; issue 48's target: 0.8 or better against the fastest), after checking
that each gives our count. The counter in use is tokens.BACKEND (FOLDSCOPE_TOKENIZER=tiktoken for the fallback).
Each figure is the best of R runs in CPU time (time.process_time, every thread's), so the ratios hold on a machine
other work shares; wall time moved with the load by a factor of six on these cores. The cold count and the exact
counters run in turn, R rounds of one each, so the two figures of a ratio meet the same load. A cold count large enough counts
its new bodies on two threads (core.request.count_texts.on_two_threads), so beside the CPU ratio each counter gets a
wall ratio: the cold count's two-core wall worked out from its threads' CPU (the process's CPU less the two threads'
in their shared stretch, plus the longer of the two: what an otherwise idle 2-core machine would take), against each
other counter's CPU (one thread each); and the wall measured here, best of R, with the load average beside it.

Run: .venv/bin/python bench/bench_count.py --own-work [--repeat R]
The cold count's own work step by step (plan, render, memo, parts) with every count made 0: what it does beside
quicktok's share (run it with a `git archive` copy on PYTHONPATH for another tree's).

Run: .venv/bin/python bench/bench_count.py --baseline COPY [--rounds K]
The same, run in turn (K times) with COPY on PYTHONPATH (a folder holding `foldscope`, e.g. a `git archive` of main
before a change) and without it; each run's cold count and ratios, then the best of each tree.

Run: .venv/bin/python bench/bench_count.py --long [--sizes 1,8,50] [--tiktoken-up-to 8]
One huge message (core.request.long_pieces): where tiktoken's time goes on one long piece (its regular
expression or its merge), the crossover between tiktoken's merge and the windowed one by piece length,
then seconds per MB of a one-piece message (one letter, random lowercase, CJK) counted by count_text
at each size, the growth exponent between sizes, and tiktoken's own time up to --tiktoken-up-to MB; first, with
quicktok, its windows against its one call on the whole at each size (the same count asserted), and four other
huge texts a user meets (JSON logs, code, CJK sentences, base64) counted as the counter counts them against quicktok's
one call. CPU seconds throughout.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foldscope.core.model.session import FullRecord, Message  # noqa: E402
from foldscope.core.request import tokens, vocabulary  # noqa: E402
from foldscope.core.request.compile import compile_request, counted_text, make_plan  # noqa: E402
from foldscope.core.request.count import Counter  # noqa: E402
from foldscope.core.request.count_reference import whole_layout  # noqa: E402
from foldscope.core.request.tokens import encoding  # noqa: E402

WORDS = (
    "the fold keeps every call with its result while the view shrinks toward its target and the record "
    "never loses a message config loader parses yaml values refuses booleans counts tokens exactly"
).split()


def prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + "."


def code(rng: random.Random, lines: int) -> str:
    out = []
    for i in range(lines):
        name = rng.choice(WORDS)
        out.append(f"    {name}_{i} = load_{rng.choice(WORDS)}(path, limit={rng.randint(0, 99999)})  # {rng.choice(WORDS)}")
    return "def module():\n" + "\n".join(out) + "\n"


def generated_view(target_tokens: int, seed: int = 7) -> list[Message]:
    """A native-shaped session: system, task, then rounds of answer, calls and results (mostly file reads)."""
    rng = random.Random(seed)
    msgs = [
        Message("m0", "system", 0, {"system_message": prose(rng, 400)}),
        Message("m1", "instruction", 1, {"instruction": prose(rng, 200), "context": {"paths": ["src/", "tests/"]}}),
    ]
    chars = 0
    n = 2
    while chars < target_tokens * 2.65:  # the bodies run about 2.65 characters per token of the whole
        msgs.append(Message(f"m{n}", "assistant", n, {"assistant_response": prose(rng, rng.randint(20, 120))}))
        calls = rng.randint(1, 3)
        for c in range(calls):
            msgs.append(
                Message(
                    f"m{n + 1 + c}",
                    "action_request",
                    n,
                    {"function": "reader", "arguments": {"path": f"src/mod{n}_{c}.py"}, "action_response_id": f"m{n + 1 + calls + c}"},
                )
            )
        for c in range(calls):
            body = code(rng, rng.randint(10, 160))
            output = body if rng.random() < 0.5 else {"success": True, "content": body, "lines": body.count("\n")}
            msgs.append(
                Message(
                    f"m{n + 1 + calls + c}",
                    "action_response",
                    n,
                    {
                        "function": "reader",
                        "arguments": {"path": f"src/mod{n}_{c}.py"},
                        "output": output,
                        "action_request_id": f"m{n + 1 + c}",
                    },
                )
            )
            chars += len(body)
        n += 1 + 2 * calls
    return msgs


def other_counters() -> list[tuple[str, object]]:
    """(name, text -> count) of each exact o200k counter installed, each built its own documented way."""
    out: list[tuple[str, object]] = []
    ranks = vocabulary.load_ranks(vocabulary.vocabulary_path())
    tik = tokens.build_encoding()
    out.append(("tiktoken encode_ordinary", lambda text: len(tik.encode_ordinary(text))))
    if tokens.quicktok is not None:
        fast = tokens.build_fast()
        out.append(("quicktok count", fast.count_whole))  # one call of quicktok's on the whole text
    try:
        from bpe_openai import _bindings  # type: ignore[import-not-found]
    except ImportError:
        pass
    else:
        bpe = _bindings.tokenizer_for_encoding("o200k_base")  # its own embedded table (it cannot take ours)
        out.append(("bpe-openai count", bpe.count))
    try:
        import riptoken  # type: ignore[import-not-found]
    except ImportError:
        pass
    else:
        rip = riptoken.CoreBPE(ranks, vocabulary.O200K_SPECIAL, vocabulary.O200K_PAT_STR)
        out.append(("riptoken encode_ordinary", lambda text: len(rip.encode_ordinary(text))))
    return out


def cold_once(view, record) -> tuple[float, float, float, int]:
    """One cold count's CPU time, two-core wall (worked out from its threads' CPU), measured wall, and its count. A tree
    without the two-thread count (main before it) has no split_cpu: its two-core wall is its CPU."""
    counter = Counter()
    counter.split_cpu = []
    w0, t0 = time.perf_counter(), time.process_time()
    result = counter.count(view, record=record)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    return cpu, cpu - sum(mine + other - max(mine, other) for mine, other, _ in counter.split_cpu), wall, result


def interleaved(view, record, text: str, counters: list[tuple[str, object]], repeat: int) -> tuple[tuple, dict]:
    """The cold count's least CPU, two-core wall and wall, and its count; and each counter's least CPU and wall on the
    whole text, and its count: `repeat` rounds, each a cold count then each counter once, so that every figure of a
    ratio meets the same load (best of a block of runs apart, the ratio moved between 0.4 and 1.1 at load 3)."""
    cold = [float("inf")] * 3 + [0]
    theirs = {name: [float("inf"), float("inf"), 0] for name, _ in counters}
    for _ in range(repeat):
        figures = cold_once(view, record)
        cold = [min(a, b) for a, b in zip(cold[:3], figures[:3])] + [figures[3]]
        for name, count in counters:
            w0, t0 = time.perf_counter(), time.process_time()
            n = count(text)  # type: ignore[operator]
            cpu, wall = time.process_time() - t0, time.perf_counter() - w0
            mine = theirs[name]
            theirs[name] = [min(mine[0], cpu), min(mine[1], wall), n]
    return tuple(cold), theirs


def best(fn, repeat: int) -> tuple[float, object]:
    """The least CPU time of `repeat` calls (this process's, every thread's), and the last call's result."""
    times, result = [], None
    for _ in range(repeat):
        t0 = time.process_time()
        result = fn()
        times.append(time.process_time() - t0)
    return min(times), result


def one_piece(kind: str, chars: int, seed: int = 3) -> str:
    rng = random.Random(seed)
    if kind == "one letter":
        return "a" * chars
    if kind == "lowercase":
        return "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=chars))
    return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(chars // 3))  # CJK: 3 bytes a character


def huge_text(kind: str, chars: int, seed: int = 3) -> str:
    """About `chars` bytes of a text a user pastes whole: JSON log lines, code, CJK sentences (no space), base64 (one line)."""
    rng = random.Random(seed)
    if kind == "base64":
        import base64

        return base64.b64encode(rng.randbytes(chars * 3 // 4)).decode()
    if kind == "CJK sentences":  # ideographs, a CJK comma or full stop every 5-30 of them
        text = rng.choices([chr(c) for c in range(0x4E00, 0x9FA6)], k=chars // 3)
        at = 0
        while at < len(text):
            at += rng.randint(5, 30)
            if at < len(text):
                text[at] = rng.choice("，，，。、；")
        return "".join(text)
    words = ["request", "handled", "cache", "miss", "user", "session", "timeout", "retry", "upstream", "ok", "error"]
    lines, size = [], 0
    while size < chars:
        if kind == "JSON logs":
            line = (
                f'{{"ts": "2026-12-05T{rng.randrange(24):02}:{rng.randrange(60):02}:{rng.randrange(60):02}Z", '
                f'"level": "{rng.choice(["info", "warn", "error"])}", "msg": "{" ".join(rng.choices(words, k=4))}", '
                f'"trace_id": "{rng.getrandbits(128):032x}", "ms": {rng.random() * 500:.2f}, "status": {rng.choice([200, 404, 500])}}}\n'
            )
        else:  # code
            name = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz_", k=rng.randint(4, 12)))
            line = (
                f"def {name}(self, {rng.choice(words)}: int, limit={rng.randrange(100)}) -> list[str]:\n"
                f"    result = [x for x in self.{rng.choice(words)}s if x.{rng.choice(words)} > {rng.randrange(1000)}]\n"
                f"    return sorted(result, key=lambda r: r.{rng.choice(words)})[:limit]\n\n"
            )
        lines.append(line)
        size += len(line)
    return "".join(lines)


def quicktok_huge_texts(sizes: list[float]) -> None:
    """quicktok's count of a huge text of each other kind as the counter counts it (FastEncoding.count: in parts cut
    between pieces, long pieces in windows) against its one call on the whole (count_whole), CPU seconds, the counts
    asserted equal."""
    from foldscope.core.request import remembered_pieces, tokens

    if tokens.BACKEND != tokens.FAST:
        return
    fast = tokens.local_encoding()
    print("quicktok: huge texts of other kinds, counted as the counter counts them against one call on the whole (CPU)")
    for kind in ("JSON logs", "code", "CJK sentences", "base64"):
        for mb in sizes:
            text = huge_text(kind, int(mb * 1_000_000))
            size = len(text.encode()) / 1e6
            remembered_pieces.REMEMBERED.clear()
            ours, n = timed(lambda text=text: fast.count(text))
            whole, m = timed(lambda text=text: fast.count_whole(text))
            assert m == n, (kind, mb, m, n)
            print(
                f"  {kind:13} {size:5.1f} MB  {n:>10,} tokens  ours {ours:6.2f} s ({ours / size:5.3f} s/MB)  "
                f"whole {whole:6.2f} s ({whole / size:5.3f} s/MB)  ratio {ours / whole:4.2f}  (same count)",
                flush=True,
            )


def timed(fn) -> tuple[float, object]:
    """fn's CPU seconds (every counter here counts on one thread) and its result."""
    t0 = time.process_time()
    result = fn()
    return time.process_time() - t0, result


def quicktok_long(sizes: list[float]) -> None:
    """quicktok's count of a one-piece message in its windows (long_pieces.count_fast) against its one call on the
    whole (count_whole), CPU seconds, the counts asserted equal; and the two-core wall of the windows (their threads')."""
    from foldscope.core.request import long_pieces, remembered_pieces, tokens

    if tokens.BACKEND != tokens.FAST:
        print(f"quicktok: not in use here ({tokens.WHY_SLOW})")
        return
    import collections
    import threading

    from foldscope.core.request import window_threads

    fast = tokens.local_encoding()
    long_pieces.count_fast(fast, one_piece("lowercase", 100_000))  # its token lengths, once
    # Each thread's CPU in the windows' merges: the two-core wall is about this thread's own CPU (the stitch, the
    # pattern's split, the hash) and the busiest merging thread's, which run at once.
    merging: collections.Counter[int] = collections.Counter()
    real = long_pieces._window_ids

    def window_ids(*args):
        t0 = time.thread_time()
        try:
            return real(*args)
        finally:
            merging[threading.get_ident()] += time.thread_time() - t0

    long_pieces._window_ids = window_ids
    print(
        f"quicktok: one piece in windows of {long_pieces.FAST_WINDOW:,} characters on {window_threads.THREADS} thread(s) "
        "against one call on the whole (CPU of every thread; the two-core wall as this thread's own and the busiest "
        "merging thread's)"
    )
    for kind in ("one letter", "lowercase", "CJK"):
        for mb in sizes:
            text = one_piece(kind, int(mb * 1_000_000))
            size = len(text.encode()) / 1e6
            remembered_pieces.REMEMBERED.clear()  # a first count, not a remembered one
            merging.clear()
            own = time.thread_time()
            windows, n = timed(lambda text=text: long_pieces.count_fast(fast, text))
            own = time.thread_time() - own - merging.pop(threading.get_ident(), 0.0)
            wall = own + max(merging.values(), default=0.0)
            whole, m = timed(lambda text=text: fast.count_whole(text))
            assert m == n, (kind, mb, m, n)
            print(
                f"  {kind:10} {size:5.1f} MB  {n:>10,} tokens  windows {windows:6.2f} s ({windows / size:4.2f} s/MB)  "
                f"whole {whole:6.2f} s ({whole / size:4.2f} s/MB)  ratio {windows / whole:4.2f}  (same count)  "
                f"two-core wall {wall:6.2f} s ({wall / size:4.2f} s/MB)",
                flush=True,
            )
    long_pieces._window_ids = real


def long_messages(sizes: list[float], tiktoken_up_to: float) -> None:
    import math

    import regex

    from foldscope.core.request import long_pieces
    from foldscope.core.request.tokens import O200K_PAT_STR, count_text, reference_encoding

    enc = reference_encoding()  # tiktoken's own (encoding() is quicktok's where it is installed)
    piece = one_piece("lowercase", 1_000_000)
    split_time, _ = timed(lambda: regex.findall(O200K_PAT_STR, piece))
    merge_time, _ = timed(lambda: enc._encode_single_piece(piece.encode()))
    whole_time, _ = timed(lambda: enc.encode_ordinary(piece))
    print("where tiktoken's time goes, 1 MB of random lowercase (one piece):")
    print(
        f"  encode_ordinary {whole_time:.2f} s; its merge alone (_encode_single_piece) {merge_time:.2f} s; "
        f"the regular expression (regex.findall) {split_time:.3f} s"
    )
    print("crossover, one lowercase piece: tiktoken's merge vs the windowed merge (ms, best of 3)")
    for length in (1024, 2048, 4096, 8192, 16384, 65536):
        data = one_piece("lowercase", length, seed=length).encode()
        ours = min(timed(lambda data=data: long_pieces.merge_long(enc, data, keep=False))[0] for _ in range(3))
        theirs = min(timed(lambda data=data: enc._encode_single_piece(data))[0] for _ in range(3))
        print(f"  {length:6,} bytes: tiktoken {theirs * 1000:7.2f}  windowed {ours * 1000:7.2f}  ratio {theirs / ours:5.2f}")
    print(f"one huge message: count_text of one piece (long pieces merged in windows from {long_pieces.LONG_PIECE:,} characters)")
    for kind in ("one letter", "lowercase", "CJK"):
        points = []
        for mb in sizes:
            text = one_piece(kind, int(mb * 1_000_000))
            size = len(text.encode()) / 1e6
            ours, n = timed(lambda text=text: count_text(text))
            line = f"  {kind:10} {size:5.1f} MB  {n:>10,} tokens  ours {ours:7.2f} s  {ours / size:5.2f} s/MB"
            if mb <= tiktoken_up_to:
                theirs, m = timed(lambda text=text: len(enc.encode_ordinary(text)))
                assert m == n, (kind, mb, m, n)
                line += f"  tiktoken {theirs:7.2f} s  {theirs / size:5.2f} s/MB  (same count)"
            if points:
                (s0, t0) = points[-1]
                line += f"  growth exponent {math.log(ours / t0) / math.log(size / s0):.2f}"
            points.append((size, ours))
            print(line, flush=True)


def own_work(view, record, repeat: int) -> None:
    """The cold count's own work, step by step, with every text's count made 0 (Tokenising._count_all: no tokenising):
    the least CPU of `repeat` cold counts, each step timed at its entry and exit (steps nest: plan_flat and memo_keys
    are inside lay_out, the rest inside _count_laid). What is left of the cold count beside quicktok's share."""
    import collections

    from foldscope.core.request import count as count_mod
    from foldscope.core.request import count_step, count_texts

    spent: collections.Counter[str] = collections.Counter()

    def timed_step(owner, name: str) -> None:
        real = getattr(owner, name, None)
        if real is None:  # a step another tree does not have (run with a `git archive` on PYTHONPATH)
            return

        def step(*args, **kwargs):
            t0 = time.process_time()
            try:
                return real(*args, **kwargs)
            finally:
                spent[name] += time.process_time() - t0

        setattr(owner, name, step)

    count_texts.Tokenising._count_all = lambda self, texts: [0] * len(texts)  # type: ignore[method-assign]
    for owner, name in ((count_step, "plan_flat"), (count_mod, "memo_keys"), (count_mod, "lay_out")):
        timed_step(owner, name)
    for name in ("_count_laid", "_new_bodies", "_tokenise", "_fill_parts"):
        timed_step(Counter, name)
    least: dict[str, float] = {}
    for _ in range(repeat):
        spent.clear()
        t0 = time.process_time()
        Counter().count(view, record=record)
        spent["cold count, no tokenising"] = time.process_time() - t0
        least = {name: min(least.get(name, float("inf")), t) for name, t in spent.items()}
    print(f"the cold count's own work (every count 0), least CPU of {repeat}, ms:")
    for name in (
        "cold count, no tokenising",
        "lay_out",
        "plan_flat",
        "memo_keys",
        "_count_laid",
        "_new_bodies",
        "_tokenise",
        "_fill_parts",
    ):
        if name in least:
            print(f"  {name:26} {least[name] * 1000:6.2f}")


def alternated(baseline: str, rounds: int, passed: list[str]) -> int:
    """This bench run as a child in turn with `baseline` on PYTHONPATH and without it; each run's cold count and its
    ratios against the fastest exact counter, then the best of each tree (CPU, two-core wall, measured wall)."""
    import re
    import subprocess

    cold = re.compile(r"Counter\(\)\.count, cold.*?([\d.]+) ms; two-core wall from its threads' CPU ([\d.]+) ms; wall measured ([\d.]+) ms")
    edit = re.compile(r"Counter\.count after one message changes:\s+([\d.]+) ms")
    fastest = re.compile(
        r"ours against the fastest exact counter \((.*)\), target >= 0.8: CPU ([\d.]+); two-core wall ([\d.]+); wall measured ([\d.]+)"
    )
    trees = {"baseline": baseline, "this tree": None}
    best: dict[str, list[float]] = {}
    runs: dict[str, list[list[float]]] = {}
    edits: dict[str, list[tuple[float, float]]] = {}  # each run's one edit and cold count, ms of CPU
    for round_ in range(1, rounds + 1):
        for name, path in trees.items():
            env = dict(os.environ)
            env.pop("PYTHONPATH", None)
            if path is not None:
                env["PYTHONPATH"] = path
            load = os.getloadavg()[0]
            out = subprocess.run([sys.executable, __file__, *passed], env=env, capture_output=True, text=True, check=True).stdout
            c, f, e = cold.search(out), fastest.search(out), edit.search(out)
            if c is None or f is None or e is None:
                print(out)
                raise SystemExit(f"bench_count: no figures in the {name}'s output")
            figures = [float(x) for x in (*c.groups(), *f.groups()[1:])]
            edits.setdefault(name, []).append((float(e.group(1)), figures[0]))
            print(
                f"round {round_}, {name:9} (load {load:.1f}): cold {figures[0]:.1f} ms CPU, {figures[1]:.1f} ms two-core wall, "
                f"{figures[2]:.1f} ms wall; against {f.group(1)}: CPU {figures[3]:.2f}, two-core wall {figures[4]:.2f}, "
                f"wall measured {figures[5]:.2f}; one edit {e.group(1)} ms CPU, re-estimate ratio "
                f"{float(e.group(1)) / figures[0]:.4f}",
                flush=True,
            )
            mine = best.setdefault(name, figures)
            best[name] = [min(a, b) for a, b in zip(mine[:3], figures[:3])] + [max(a, b) for a, b in zip(mine[3:], figures[3:])]
            runs.setdefault(name, []).append(figures)
    for name, figures in best.items():
        print(
            f"best, {name:9}: cold {figures[0]:.1f} ms CPU, {figures[1]:.1f} ms two-core wall, {figures[2]:.1f} ms wall; "
            f"ours / the fastest: CPU {figures[3]:.2f}, two-core wall {figures[4]:.2f}, wall measured {figures[5]:.2f}"
        )
    # A round whose other counter met a busier moment than the cold count gives a ratio far above the others (0.93
    # among 0.65-0.66 at load 3-5): the median ratio by CPU is the steadier figure.
    for name, rows in runs.items():
        print(
            f"median, {name:9}: ours / the fastest by CPU {statistics.median(row[3] for row in rows):.2f}, two-core wall "
            f"{statistics.median(row[4] for row in rows):.2f}; one edit {statistics.median(e for e, _ in edits[name]):.2f} ms, "
            f"re-estimate ratio {statistics.median(e / c for e, c in edits[name]):.4f} ({len(rows)} rounds)"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--long", action="store_true", help="the one-huge-message figures instead")
    ap.add_argument("--sizes", default="1,8,50", help="MB of each one-piece message (--long)")
    ap.add_argument("--tiktoken-up-to", type=float, default=8, help="time tiktoken too up to this many MB (--long)")
    ap.add_argument(
        "--baseline",
        metavar="COPY",
        help="a folder holding `foldscope` (a git archive of main before a change): this bench run in turn with COPY "
        "on PYTHONPATH and without it (the installed tree), --rounds times, each run's figures and the best of each",
    )
    ap.add_argument("--rounds", type=int, default=2, help="alternations with --baseline")
    ap.add_argument("--own-work", action="store_true", help="the cold count's own work by step, tokenising left out")
    args = ap.parse_args(argv)
    if args.own_work:
        view = generated_view(args.tokens)
        own_work(view, FullRecord(view), args.repeat)
        return 0
    if args.baseline:
        return alternated(args.baseline, args.rounds, ["--tokens", str(args.tokens), "--repeat", str(args.repeat)])
    if args.long:
        quicktok_long([float(x) for x in args.sizes.split(",")])
        quicktok_huge_texts([float(x) for x in args.sizes.split(",")])
        long_messages([float(x) for x in args.sizes.split(",")], args.tiktoken_up_to)
        return 0

    view = generated_view(args.tokens)
    record = FullRecord(view)
    enc = encoding()
    text = counted_text(compile_request(view, record=record))

    raw_time, raw_tokens = best(lambda: len(enc.encode_ordinary(text)), args.repeat)
    counters = other_counters()
    (cold_time, cold_two, cold_wall, cold_tokens), theirs = interleaved(view, record, text, counters, args.repeat)
    assert cold_tokens == raw_tokens, (cold_tokens, raw_tokens)

    counter = Counter()
    counter.count(view, record=record)
    middle = len(view) // 2
    while view[middle].kind != "assistant":
        middle += 1
    edits = iter(range(10**6))

    def one_edit() -> int:
        edited = Message(f"edit{next(edits)}", "assistant", 0, {"assistant_response": view[middle].text + " And one more sentence."})
        return counter.count(view[:middle] + [edited] + view[middle + 1 :], record=record)

    edit_time, edit_tokens = best(one_edit, args.repeat)
    edited_view = (
        view[:middle]
        + [Message("check", "assistant", 0, {"assistant_response": view[middle].text + " And one more sentence."})]
        + view[middle + 1 :]
    )
    assert edit_tokens == len(enc.encode_ordinary(counted_text(compile_request(edited_view, record=record))))

    # The GUI's hand actions in the middle of the view: one answer removed (evict), one note put in (a restore's insert).
    answers = iter([i for i in range(middle, len(view)) if view[i].kind == "assistant"][: args.repeat])

    def one_removal() -> list:  # each time another answer, so that no view counted before is counted again
        i = next(answers)
        counter.count(view, record=record)  # the view as it stood: the counter has it laid out already
        removed = view[:i] + view[i + 1 :]
        return [removed, counter.count(removed, record=record)]

    remove_time, (removed, remove_tokens) = best(one_removal, args.repeat)
    assert remove_tokens == len(enc.encode_ordinary(counted_text(compile_request(removed, record=record))))
    notes = iter(range(10**6))

    def one_insert() -> int:
        note = Message(f"note{next(notes)}", "note", 0, {"assistant_response": "Folded: three reads of src/."})
        return counter.count(view[:middle] + [note] + view[middle:], record=record)

    insert_time, insert_tokens = best(one_insert, args.repeat)
    inserted = view[:middle] + [Message("n", "note", 0, {"assistant_response": "Folded: three reads of src/."})] + view[middle:]
    assert insert_tokens == len(enc.encode_ordinary(counted_text(compile_request(inserted, record=record))))

    # The next request: the view with one more answer appended (the counter re-plans from its last turn).
    appends = iter(range(10**6))

    def one_append() -> int:
        return counter.count(view + [Message(f"next{next(appends)}", "assistant", 0, {"assistant_response": "Done."})], record=record)

    counter.count(view, record=record)
    append_time, _ = best(one_append, args.repeat)

    print(f"view: {len(view):,} messages, {raw_tokens:,} tokens, {len(text):,} characters (best of {args.repeat}, CPU time)")
    print(f"raw encode_ordinary ({tokens.BACKEND}), whole text: {raw_time * 1000:8.1f} ms")
    print(
        f"Counter().count, cold (compile + count):  {cold_time * 1000:8.1f} ms; two-core wall from its threads' CPU "
        f"{cold_two * 1000:.1f} ms; wall measured {cold_wall * 1000:.1f} ms"
    )
    print(f"Counter.count after one message changes:  {edit_time * 1000:8.1f} ms")
    print(f"Counter.count with one answer removed:    {remove_time * 1000:8.1f} ms")
    print(f"Counter.count with one note put in:       {insert_time * 1000:8.1f} ms")
    print(f"Counter.count of the view plus one answer: {append_time * 1000:8.1f} ms")
    print(f"throughput ratio (raw / ours, target >= 0.8):           {raw_time / cold_time:.2f}")
    load = os.getloadavg()[0]
    print(
        f"counted by {tokens.BACKEND}; the exact counters on the whole text, best of {args.repeat}, and ours against each "
        f"(theirs / ours: CPU; two-core wall, theirs one thread's CPU; wall measured, load average {load:.1f}):"
    )
    print(
        f"  {'foldscope Counter (cold)':26} {cold_time * 1000:8.1f} ms CPU  {cold_two * 1000:6.1f} ms two-core wall  "
        f"{cold_wall * 1000:6.1f} ms wall  {raw_tokens / cold_time / 1e6:6.2f} M tokens/s of CPU"
    )
    fastest = None
    for name, _ in counters:
        other_time, other_wall, other_tokens = theirs[name]
        same = "same count" if other_tokens == raw_tokens else f"DIFFERENT COUNT {other_tokens:,}"
        print(
            f"  {name:26} {other_time * 1000:8.1f} ms CPU  {other_wall * 1000:6.1f} ms wall  "
            f"{raw_tokens / other_time / 1e6:6.2f} M tokens/s  ours / theirs: CPU {other_time / cold_time:5.2f}, "
            f"two-core wall {other_time / cold_two:5.2f}, wall measured {other_wall / cold_wall:5.2f}  ({same})"
        )
        if other_tokens == raw_tokens and (fastest is None or other_time < fastest[1]):
            fastest = (name, other_time, other_wall)
    if fastest is not None:
        name, other_time, other_wall = fastest
        print(
            f"ours against the fastest exact counter ({name}), target >= 0.8: CPU {other_time / cold_time:.2f}; "
            f"two-core wall {other_time / cold_two:.2f}; wall measured {other_wall / cold_wall:.2f} (load {load:.1f})"
        )
    # The floor of a counter that memoises each block: the tokenizer on each body the Counter counts, one call each (the
    # head and every block's body, as core.request.count_reference.whole_layout cuts them); the rest of a cold count is Python.
    plan = make_plan(view, record=record)
    bodies = [body for _, body, _, _ in whole_layout(Counter(), plan, {}, record, None, None, every_body=True)]
    count_one = tokens.counter()
    one_time, one_tokens = best(lambda: sum(map(count_one, bodies)), args.repeat)
    print(
        f"{tokens.BACKEND} on the Counter's {len(bodies):,} bodies one by one (the floor of a per-block memo): {one_time * 1000:8.1f} ms; "
        f"the cold count's own work above it: {(cold_time - one_time) * 1000:.1f} ms"
    )
    print(f"re-estimate ratio (one edit / cold count, target < 0.05): {edit_time / cold_time:.4f}")
    print(f"re-estimate vs raw whole count:                          {edit_time / raw_time:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
