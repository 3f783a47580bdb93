"""Every `--json` command on every corpus file, written to a folder: diff two runs to prove a change kept the outputs.

Runs inspect, requests, composition, cache, compactions and replay (`--json`, one worker) on each file of
../shared/corpus/dev/ and ../shared/corpus/staged/inspect/ (the five formats foldscope reads), one file per
(command, session) named after both, the exit code and stderr kept beside stdout; then `sessions --json` on a fake
home whose agents' folders link to the dev files. A refactor that must not change behaviour runs it before and after:

    .venv/bin/python tools/json_outputs.py /tmp/before
    ... change ...
    .venv/bin/python tools/json_outputs.py /tmp/after && diff -r /tmp/before /tmp/after
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


def corpus_files() -> list[Path]:
    files = [p for p in sorted((CORPUS / "dev").rglob("*")) if p.is_file()]
    return files + [p for p in sorted((CORPUS / "staged" / "inspect").glob("*")) if p.is_file()]


def run(argv: list[str], env: dict[str, str]) -> str:
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "foldscope"), *argv], capture_output=True, text=True, env=env, cwd=ROOT)
    return f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder the outputs are written to (made if missing)")
    parser.add_argument("--jobs", type=int, default=2, help="commands run at once (default 2)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        # A home of its own: no library, settings or sessions of the machine's user leak in.
        env = {**os.environ, "HOME": home, "FOLDSCOPE_NO_HELPER": "1"}
        for agent in HOMES:
            env.pop({"claude_code": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME", "pi": "PI_CODING_AGENT_DIR"}[agent], None)
        jobs = []
        for path in corpus_files():
            name = str(path.relative_to(CORPUS)).replace("/", "__")
            for command in COMMANDS:
                argv = [command, str(path), "--json"] + (["--workers", "1"] if command in WORKERS else [])
                jobs.append((args.out / f"{command}__{name}.txt", argv))
        with ThreadPoolExecutor(args.jobs) as pool:
            for target, text in zip([t for t, _ in jobs], pool.map(lambda job: run(job[1], env), jobs)):
                target.write_text(text)
        for agent, folder in HOMES.items():
            (Path(home) / folder).mkdir(parents=True)
            for path in sorted((CORPUS / "dev" / agent).glob("*.jsonl")):
                link = "rollout-" + path.name if agent == "codex" and not path.name.startswith("rollout-") else path.name
                (Path(home) / folder / link).symlink_to(path)
        (args.out / "sessions.txt").write_text(run(["sessions", "--json"], env).replace(home, "$HOME"))
    print(f"{len(jobs) + 1} outputs in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
