"""Benchmark of a summary of many sessions' usage and cost: what needs no tokenising, against what counts.

Over the dev corpus (every file, flattened into one folder of links; 27 files, 26 sessions) it times, best of R,
as a user runs them (a fresh process each time, imports included):
- `foldscope replay DIR --strategy recorded` (reads the reported usage and prices it, tokenising nothing), against
  the same with `--count` (the previous behaviour: every request compiled and counted, the cache model run);
- `foldscope sessions` over the same files laid out as the agents keep them (Claude Code, Codex, pi folders);
- the in-process part of the summary (load every file, price its usage) without interpreter start and imports.
- `foldscope usage DIR --plain --by day` (reported usage only) and `foldscope usage DIR --by day` (with the
  wasted writes and compactions, which count every session) on the Claude Code files, against ccusage's `daily`
  on the same files laid out as Claude Code keeps them, in the same run, when `--ccusage PATH` names its
  executable (`npm install ccusage@18.0.11`: the newest releases need a native binary npm does not offer for
  linux-x64); its daily totals are compared with ours. They differ, and not by rounding: ccusage 18 drops a
  repeated line only by message id and requestId together, so in files without requestId (the redacted corpus
  sessions) every line of one response (Claude Code writes one per content block, each repeating the usage) is
  counted again (session-196820da: 133 lines, 47 responses, cache writes 3,974,296 against 1,473,882); where it
  does drop them it keeps the first line, whose output_tokens is the streaming count so far (subagent.jsonl:
  611 against the final 1,811). tests/core/cli/test_usage.py sums the files by response, independently.
Each command's CPU (user and system of its process, least of R) is printed beside its wall time: on a shared machine
the wall time holds the others' work. Issue 48's comparison is `replay DIR --strategy recorded` over the files ccusage
reads (the Claude Code files, where Claude Code keeps them) against ccusage's CPU; over all 27 files it also reads
and prices Codex, pi and lionagi sessions, and counts the three that report no usage (the tokenizer's build).
Usage: python bench/bench_usage.py [CORPUS_DIR] [--repeat 5] [--ccusage PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDSCOPE = [sys.executable, "-m", "foldscope.core.cli"]


def flat(corpus: Path, into: Path) -> list[Path]:
    """Every corpus file linked into one folder (names keep their agent folder), never copied."""
    out = []
    for path in sorted(p for p in corpus.rglob("*") if p.is_file()):
        link = into / str(path.relative_to(corpus)).replace("/", "__")
        link.symlink_to(path)
        out.append(link)
    return out


def agent_home(corpus: Path, into: Path) -> dict[str, str]:
    """The corpus's Claude Code, Codex and pi files laid out where each agent keeps them; their env variables."""
    layout = {
        "claude_code": into / "claude" / "projects" / "corpus",
        "codex": into / "codex" / "sessions" / "2026" / "01" / "01",
        "pi": into / "pi" / "sessions" / "corpus",
    }
    for agent, folder in layout.items():
        folder.mkdir(parents=True)
        for path in sorted((corpus / agent).rglob("*.jsonl")):
            name = path.name if agent != "codex" or path.name.startswith("rollout-") else f"rollout-{path.name}"
            (folder / name).symlink_to(path)
    return {
        "CLAUDE_CONFIG_DIR": str(into / "claude"),
        "CODEX_HOME": str(into / "codex"),
        "PI_CODING_AGENT_DIR": str(into / "pi"),
        "HOME": str(into),
    }


def best(argv: list[str], repeat: int, env: dict[str, str] | None = None) -> tuple[float, str]:
    """The least wall time of `repeat` runs and the last run's output; each run's CPU (user and system, the child's
    own, which the machine's other work does not inflate) is kept in CPU under the command's first words."""
    times, cpus, out = [], [], ""
    for _ in range(repeat):
        before = _children_cpu()
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **(env or {})}, cwd=ROOT.parent)
        times.append(time.perf_counter() - start)
        cpus.append(_children_cpu() - before)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()[:300]}")
        out = done.stdout
    CPU[" ".join(argv)] = min(cpus)
    return min(times), out


CPU: dict[str, float] = {}  # each command's least CPU seconds (best)


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def in_process(files: list[Path]) -> float:
    """Load every file and sum and price its reported usage, in this process (imports already paid)."""
    from foldscope.core.formats import load_session
    from foldscope.core.model.policy import Policy
    from foldscope.core.model.session import ReadError
    from foldscope.core.replay.billed import billed_summary

    for path in files[:1]:  # warm the imports and the price data
        billed_summary(load_session(str(path)), Policy())
    start = time.perf_counter()
    for path in files:
        try:
            billed_summary(load_session(str(path)), Policy())
        except ReadError:
            continue
    return time.perf_counter() - start


def compare_days(ours: list[dict], theirs: list[dict]) -> None:
    """Each day's tokens and cost, ours against ccusage's, and the days where they differ."""
    keys = (("fresh", "inputTokens"), ("cache_read", "cacheReadTokens"), ("cache_write", "cacheCreationTokens"), ("output", "outputTokens"))
    by_day = {r["day"]: r for r in ours}
    same = 0
    for day in theirs:
        row = by_day.get(day["date"])
        if row is None:
            print(f"  {day['date']}: ccusage only")
            continue
        diff = {a: (row[a], day[b]) for a, b in keys if row[a] != day[b]}
        cost = (row["cost_usd"], round(day["totalCost"], 6))
        if diff or abs(cost[0] - cost[1]) > 0.005:
            print(f"  {day['date']}: ours/ccusage {diff} cost {cost[0]:.4f}/{cost[1]:.4f}")
        else:
            same += 1
    print(f"days alike (tokens equal, cost within half a cent): {same} of {len(theirs)} ccusage days, {len(ours)} of ours")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", nargs="?", default=str(ROOT.parent / "shared" / "corpus" / "dev"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ccusage", metavar="PATH", help="ccusage's executable, run beside `foldscope usage`")
    args = parser.parse_args()
    corpus = Path(args.corpus)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "flat"
        folder.mkdir()
        files = flat(corpus, folder)
        home = agent_home(corpus, Path(tmp) / "home")
        summary, out = best([*FOLDSCOPE, "replay", str(folder), "--strategy", "recorded", "--json"], args.repeat)
        table = json.loads(out)["table"]
        counted, out_counted = best([*FOLDSCOPE, "replay", str(folder), "--strategy", "recorded", "--json", "--count"], args.repeat)
        sessions, out_sessions = best([*FOLDSCOPE, "sessions", "--json"], args.repeat, home)
        startup, _ = best(
            [sys.executable, "-c", "import foldscope.core.cli.main, foldscope.core.cli.replay, foldscope.core.replay.billed"], args.repeat
        )
        loaded = min(in_process(files) for _ in range(args.repeat))
        claude = Path(tmp) / "home" / "claude"
        plain, out_plain = best([*FOLDSCOPE, "usage", str(claude), "--plain", "--by", "day", "--json"], args.repeat)
        full, _ = best([*FOLDSCOPE, "usage", str(claude), "--by", "day", "--json"], args.repeat)
        # The same command over only the files ccusage reads (the Claude Code files where Claude Code keeps them).
        same_files, _ = best([*FOLDSCOPE, "replay", str(claude / "projects" / "corpus"), "--strategy", "recorded", "--json"], args.repeat)
        theirs = None
        if args.ccusage:
            theirs = best([args.ccusage, "daily", "--json", "--offline"], args.repeat, {"CLAUDE_CONFIG_DIR": str(claude), "TZ": "UTC"})
    untokenised = sum(1 for r in table if r.get("counted") is False)
    same = all(
        a[k] == b[k]
        for a, b in zip(table, json.loads(out_counted)["table"])
        for k in ("requests", "fresh", "cache_read", "cache_write", "cache_write_1h", "output", "cost_usd", "reported_over_ceiling")
    )
    print(
        f"dev corpus: {len(files)} files, {len(table)} sessions in the table ({untokenised} from reported usage "
        f"alone; the rest report no usage and are counted), {len(json.loads(out_sessions)['sessions'])} in sessions"
    )
    cpu = dict(zip(("summary", "counted", "sessions", "startup", "plain", "full", "same_files", "ccusage"), CPU.values()))
    print(f"{'command':<58} {'best of ' + str(args.repeat):>10} {'CPU (user+sys)':>15}")
    print(f"{'replay DIR --strategy recorded (no tokenising)':<58} {summary:>9.3f}s {cpu['summary']:>14.3f}s")
    print(f"{'replay DIR --strategy recorded --count (before: counts)':<58} {counted:>9.3f}s {cpu['counted']:>14.3f}s")
    print(f"{'sessions (the same files where the agents keep them)':<58} {sessions:>9.3f}s {cpu['sessions']:>14.3f}s")
    print(f"{'  of which interpreter start and imports':<58} {startup:>9.3f}s {cpu['startup']:>14.3f}s")
    print(f"{'  in process: load 27 files, price their usage':<58} {loaded:>9.3f}s")
    n_claude = len(list((corpus / "claude_code").rglob("*.jsonl")))
    print(f"{f'usage DIR --plain --by day ({n_claude} Claude Code files)':<58} {plain:>9.3f}s {cpu['plain']:>14.3f}s")
    print(f"{'usage DIR --by day (with wasted writes, compactions)':<58} {full:>9.3f}s {cpu['full']:>14.3f}s")
    print(f"{f'replay DIR --strategy recorded ({n_claude} Claude Code files)':<58} {same_files:>9.3f}s {cpu['same_files']:>14.3f}s")
    if theirs is None:
        print("ccusage: not run (give --ccusage PATH)")
    else:
        print(f"{'ccusage daily --offline (the Claude Code files)':<58} {theirs[0]:>9.3f}s {cpu['ccusage']:>14.3f}s")
        print(f"usage --plain over ccusage: {plain / theirs[0]:.2f}x the time, {cpu['plain'] / cpu['ccusage']:.2f}x the CPU")
        print(
            f"replay DIR --strategy recorded over ccusage, the same {n_claude} files: {same_files / theirs[0]:.2f}x the time, "
            f"{cpu['same_files'] / cpu['ccusage']:.2f}x the CPU (issue 48: within 2x); all {len(files)} files (Codex, pi and "
            f"lionagi too): {summary / theirs[0]:.2f}x the time, {cpu['summary'] / cpu['ccusage']:.2f}x the CPU"
        )
        compare_days(json.loads(out_plain)["rows"], json.loads(theirs[1])["daily"])
    print(f"speed-up of the untokenised summary over counting: {counted / summary:.2f}x; totals identical: {same}")


if __name__ == "__main__":
    main()
