"""Every `--json` command on every corpus file, written to a folder: diff two runs to prove a change kept the outputs.

Runs inspect, requests, composition, cache, compactions and replay (`--json`, one worker) on each file of
../shared/corpus/dev/ and ../shared/corpus/staged/inspect/ (the five formats foldscope reads), one file per
(command, session) named after both, the exit code and stderr kept beside stdout; then `sessions --json` on a fake
home whose agents' folders link to the dev files. A refactor that must not change behaviour runs it before and after:

    .venv/bin/python tools/json_outputs.py /tmp/before
    ... change ...
    .venv/bin/python tools/json_outputs.py /tmp/after && diff -r /tmp/before /tmp/after

`make check` holds a few small dev files' outputs to the ones kept in tools/golden/ (`--check`); a change that means
to change them says so by rewriting them (`--update`) in the same commit, so the diff shows what changed:

    .venv/bin/python tools/json_outputs.py --check     # exit 1 and the first differing lines when one differs
    .venv/bin/python tools/json_outputs.py --update    # rewrite tools/golden/ from the code as it is
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
COMMANDS = ("inspect", "requests", "composition", "cache", "compactions", "replay")
WORKERS = {"cache", "compactions", "replay"}  # the commands that take --workers (a folder's processes)
# Where each agent's sessions sit under its home folder (core.formats.discover): the fake home links the dev files here.
HOMES = {"claude_code": ".claude/projects/dev", "codex": ".codex/sessions/2026/01/01", "pi": ".pi/agent/sessions/dev"}


GOLDEN = ROOT / "tools" / "golden"
# Small dev files, one per format with a replay worth having, so the check costs seconds, not minutes.
GOLDEN_FILES = (
    "dev/claude_code/short.jsonl",
    "dev/codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
    "dev/lionagi/branch_v0.36.0_after_context_fold.synthetic.json",
    "dev/pi/earendil-works-pi_prompt-cache-replay-session.jsonl",
)


def corpus_files() -> list[Path]:
    files = [p for p in sorted((CORPUS / "dev").rglob("*")) if p.is_file()]
    return files + [p for p in sorted((CORPUS / "staged" / "inspect").glob("*")) if p.is_file()]


def run(argv: list[str], env: dict[str, str]) -> str:
    # The command beside the interpreter running this script, not ROOT's own .venv: a worktree (ROOT) has none, and the
    # tree under test is the one on PYTHONPATH, which the command's environment carries.
    done = subprocess.run([str(Path(sys.executable).parent / "foldscope"), *argv], capture_output=True, text=True, env=env, cwd=ROOT)
    return f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"


def outputs(paths: list[Path], jobs: int, env: dict[str, str]) -> dict[str, str]:
    """Each (command, file)'s output, named after both."""
    named = []
    for path in paths:
        name = str(path.relative_to(CORPUS)).replace("/", "__")
        for command in COMMANDS:
            argv = [command, str(path), "--json"] + (["--workers", "1"] if command in WORKERS else [])
            named.append((f"{command}__{name}.txt", argv))
    with ThreadPoolExecutor(jobs) as pool:
        texts = pool.map(lambda job: run(job[1], env), named)
        return {name: text for (name, _), text in zip(named, texts)}


def golden(update: bool, jobs: int) -> int:
    """Compare (or rewrite) the small files' outputs with the ones kept in tools/golden/."""
    paths = [CORPUS / name for name in GOLDEN_FILES]
    if not all(p.is_file() for p in paths):
        print(f"json_outputs: skipped, the dev corpus is not at {CORPUS}")
        return 0
    with tempfile.TemporaryDirectory() as home:
        found = outputs(paths, jobs, {**os.environ, "HOME": home, "FOLDSCOPE_COUNTING": "local"})
    # the corpus's place on this machine, written as $CORPUS, so the kept outputs hold on any checkout
    found = {name: text.replace(str(CORPUS), "$CORPUS") for name, text in found.items()}
    if update:
        GOLDEN.mkdir(exist_ok=True)
        for old in GOLDEN.glob("*.txt"):
            old.unlink()
        for name, text in found.items():
            (GOLDEN / name).write_text(text)
        print(f"json_outputs: {len(found)} outputs written to {GOLDEN}")
        return 0
    differ = [name for name, text in found.items() if not (GOLDEN / name).is_file() or (GOLDEN / name).read_text() != text]
    for name in differ:
        kept = (GOLDEN / name).read_text().splitlines() if (GOLDEN / name).is_file() else ["(none kept)"]
        line = next(
            (i for i, (a, b) in enumerate(zip(kept, found[name].splitlines())) if a != b), min(len(kept), len(found[name].splitlines()))
        )
        print(f"json_outputs: {name} differs from tools/golden/ at line {line + 1}", file=sys.stderr)
    if differ:
        print("json_outputs: a change meant to change them rewrites them with --update in the same commit", file=sys.stderr)
        return 1
    print(f"json_outputs: {len(found)} outputs equal the kept ones")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?", help="the folder the outputs are written to (made if missing)")
    parser.add_argument("--jobs", type=int, default=2, help="commands run at once (default 2)")
    parser.add_argument("--check", action="store_true", help="compare a few small dev files' outputs with tools/golden/")
    parser.add_argument("--update", action="store_true", help="rewrite tools/golden/ from the code as it is")
    args = parser.parse_args()
    if args.check or args.update:
        return golden(args.update, args.jobs)
    if args.out is None:
        parser.error("give the folder to write to, or --check, or --update")
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        # A home of its own: no library, settings or sessions of the machine's user leak in.
        env = {**os.environ, "HOME": home, "FOLDSCOPE_COUNTING": "local"}
        for agent in HOMES:
            env.pop({"claude_code": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME", "pi": "PI_CODING_AGENT_DIR"}[agent], None)
        found = outputs(corpus_files(), args.jobs, env)
        for name, text in found.items():
            (args.out / name).write_text(text)
        for agent, folder in HOMES.items():
            (Path(home) / folder).mkdir(parents=True)
            for path in sorted((CORPUS / "dev" / agent).glob("*.jsonl")):
                link = "rollout-" + path.name if agent == "codex" and not path.name.startswith("rollout-") else path.name
                (Path(home) / folder / link).symlink_to(path)
        (args.out / "sessions.txt").write_text(run(["sessions", "--json"], env).replace(home, "$HOME"))
    print(f"{len(found) + 1} outputs in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
