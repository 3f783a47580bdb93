# ruff: noqa: E501  (the mutant list: each edit reads best as one line of exact source text)
"""`make mutate`: apply one listed rule change at a time to the fold core and run its tests; print the kill rate.

Each mutant is one exact edit of a rule ADR-0130 states (a boundary, a constant, a stage's order, a keep set,
a clip body rule, a protection, the first round's decision). The project is copied once into a scratch folder
(beside a link to ../shared, so the corpus tests run); each mutant is applied to the copy alone, the fold
tests run there with `-x`, and the file is put back. A mutant is killed when a test fails, survives when all
pass. The working tree is never edited. Usage:

    .venv/bin/python tools/mutate.py            # every mutant
    .venv/bin/python tools/mutate.py -k reset   # those whose name contains "reset"
    .venv/bin/python tools/mutate.py --list     # the list, without running

docs/testing.md records the last rate and the survivors judged equivalent.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the quick, exact tests first (with -x a killed mutant stops at its first failure), the random sequences last
TESTS = [
    "tests/core/fold",
    "tests/core/request/test_first_round.py",
    "tests/core/request/test_projection.py",
    "tests/core/request/test_compile.py",
    "tests/core/request/test_trace.py",
    "tests/core/actions/test_commands.py",
    "tests/core/cli/test_fold.py",
    "tests/core/cli/test_fold_saves.py",
    "tests/core/cli/test_basic.py",
    "tests/core/replay/test_adr_is_the_fold.py",
    "tests/core/replay/test_strategies.py",
    "tests/core/replay/test_what_if.py",
    "tests/core/actions/test_action_sequences.py",
]
# the random action sequences run too, but at a short length (their profile), so each mutant costs seconds
ENV = {"FOLDSCOPE_HYPOTHESIS": "ci", "QT_QPA_PLATFORM": "offscreen", "FOLDSCOPE_BLOCK_QT": "1"}


@dataclass(frozen=True)
class Mutant:
    name: str  # the ADR statement it breaks
    path: str
    old: str
    new: str
    equivalent: str = ""  # where a comment shows that no input tells it apart (run anyway: a kill disproves it)


F, FS, CUTS, CLIP, BODIES = "core/fold/fold.py", "core/fold/stages.py", "core/fold/cuts.py", "core/fold/clip.py", "core/request/bodies.py"
PROJ = "core/request/projection.py"
FR, DEL, ACT, REC, TRACE = (
    "core/request/first_round.py",
    "core/fold/delivery.py",
    "core/actions/commands.py",
    "core/actions/recovery.py",
    "core/request/trace.py",
)

MUTANTS = [
    # -- D4: the ceiling boundary, the stop at the target, the resumes
    Mutant(
        "D4 the one ceiling rule: at the ceiling sent",
        "core/request/measure.py",
        "return ceiling is not None and size >= ceiling",
        "return ceiling is not None and size > ceiling",
    ),
    Mutant(
        "D4 fits: restore's admission ignores the ceiling",
        F,
        "        return self.measure.fits_size(self.estimate([self.session.record.get(i) for i in view_ids]))",
        "        return True",
    ),
    Mutant(
        "D4 resume loop: a refused estimate is sent",
        F,
        "            if self.measure.fits_size(estimate):\n                return runs, None",
        "            if True:\n                return runs, None",
    ),
    Mutant(
        "D4 trace refusal: at the ceiling sent",
        TRACE,
        "if ceiling is None or max(size, reported or 0) < ceiling:",
        "if ceiling is None or max(size, reported or 0) <= ceiling:",
    ),
    Mutant("D4 stop: at the target goes on", F, "or state.estimate > self.target_tokens", "or state.estimate >= self.target_tokens"),
    Mutant(
        "D4 line: at the line does not fold",
        F,
        "        if estimate < self.line_tokens:",
        "        if estimate <= self.line_tokens:",
    ),
    Mutant("Amendment 1: one resume", F, "MAX_RESUMES = 2", "MAX_RESUMES = 1"),
    Mutant("Amendment 1: three resumes", F, "MAX_RESUMES = 2", "MAX_RESUMES = 3"),
    Mutant(
        "Amendment 1: a resume need not land",
        F,
        "            if not run.landed:\n                break",
        "            if False:\n                break",
    ),
    Mutant("Amendment 1: tails six then two", F, "KEEP_TAILS = (6, 2)", "KEEP_TAILS = (5, 2)"),
    Mutant("Amendment 1: tail of two", F, "KEEP_TAILS = (6, 2)", "KEEP_TAILS = (6, 3)"),
    Mutant("D7 notice at 80% of the ceiling", TRACE, "NOTICE_AT = 0.8", "NOTICE_AT = 0.9"),
    # -- Amendment 2: strictly lower, the floor view, the order
    Mutant("Amendment 2: a pass lands only strictly lower", F, "landed = after < before", "landed = after <= before"),
    Mutant(
        "Amendment 2: a clip cut only strictly lower",
        F,
        "if cut is None or cut.estimate >= estimate:",
        "if cut is None or cut.estimate > estimate:",
    ),
    Mutant("Amendment 2: floor view tail of two", F, "or i >= len(state.view) - 2]", "or i >= len(state.view) - 3]"),
    Mutant(
        "Amendment 2: floor over the ceiling still summarises",
        F,
        "            if not self.measure.fits_size(run.floor_estimate):\n                tails = ()",
        "            if False:\n                tails = ()",
    ),
    Mutant("Amendment 2: floor over the target still runs six", F, "                tails = (2,)", "                tails = KEEP_TAILS"),
    Mutant(
        "Amendment 2: floor under the target runs two only",
        F,
        "            else:\n                tails = KEEP_TAILS",
        "            else:\n                tails = (2,)",
    ),
    Mutant(
        "Amendment 2: no clip stage",
        F,
        "        if more():\n            self._clip_pass(state, run, reason)",
        "        if False:\n            self._clip_pass(state, run, reason)",
    ),
    Mutant(
        "Amendment 2: before measured at the old scale",
        F,
        "        before = self.estimate(state.view) if raised else state.estimate\n",
        "        before = state.estimate\n",
    ),
    Mutant(
        "Amendment 2: undelivered results fold",
        FS,
        '        if m.id not in delivered and m.kind != "note" and not is_delivered(m, delivered, record):',
        "        if False:",
    ),
    Mutant(
        "Amendment 2: a result leaves with its call kept",
        FS,
        "return [mid for mid in chosen if not (mid in facts.call_of and facts.call_of[mid] not in taken)]",
        "return list(chosen)",
    ),
    Mutant("Amendment 2: clip floor 1,024", CLIP, "CLIP_FLOOR = 1024", "CLIP_FLOOR = 1000"),
    Mutant("Amendment 2: head and tail three to one", BODIES, "HEAD_SHARE = 3", "HEAD_SHARE = 2"),
    Mutant("Amendment 2: success is cut", BODIES, 'PROTECTED_KEYS = ("success", "error")', 'PROTECTED_KEYS = ("error",)'),
    Mutant("Amendment 2: error is cut", BODIES, 'PROTECTED_KEYS = ("success", "error")', 'PROTECTED_KEYS = ("success",)'),
    Mutant("Amendment 2: JSON-refused values are bodies", BODIES, "(isinstance(value, str) or _json_text(value) is not None)", "True"),
    Mutant("Amendment 2: a shortened body loses its tail", CLIP, '(text[len(text) - tail :] if tail else "")', '""'),
    Mutant("Amendment 2: a shortened body loses its head", CLIP, "shown = text[:head] + marker(", "shown = marker("),
    Mutant(
        "Amendment 2: ties to the newest",
        CUTS,
        "out.sort(key=lambda e: (-e.current, e.slot.index, e.slot.position))",
        "out.sort(key=lambda e: (-e.current, -e.slot.index, e.slot.position))",
    ),
    Mutant(
        "Amendment 2: smallest first",
        CUTS,
        "out.sort(key=lambda e: (-e.current, e.slot.index, e.slot.position))",
        "out.sort(key=lambda e: (e.current, e.slot.index, e.slot.position))",
    ),
    Mutant(
        "Amendment 2: re-clip from the original's length",
        CUTS,
        "current, floor = allowance.get(body.key, len(body.text)), CLIP_FLOOR",
        "current, floor = len(body.text), CLIP_FLOOR",
    ),
    Mutant("Amendment 2: marker's first limit not capped", BODIES, "    first = min(omitted, limit)", "    first = limit"),
    Mutant("Amendment 2: read protection never expires", DEL, "    session.branch_metadata.pop(NO_CLIP_KEY, None)\n", "\n"),
    Mutant(
        "Amendment 2: restore does not protect",
        ACT,
        '        protect_from_clip(session, [m.id for m in restored if m.kind == "action_response"])\n',
        "\n",
    ),
    Mutant(
        "Amendment 2: read_result does not protect", REC, "            protect_from_clip(session, [original.id])\n", "            pass\n"
    ),
    Mutant(
        "Amendment 2: protected results are clipped",
        F,
        "skip = no_clip_ids(self.session) | self.protected(state.view)",
        "skip = self.protected(state.view)",
    ),
    Mutant(
        "D4: a restored call without its result",
        ACT,
        "            if isinstance(result, str) and result in record and result not in in_view and result not in copy_at:\n                wanted.append",
        "            if False:\n                wanted.append",
    ),
    Mutant(
        "Amendment 2: a copy restored on its own",
        ACT,
        "if m.id in in_view or m.is_clipped_copy or m in inserts",
        "if m.id in in_view or m in inserts",
    ),
    Mutant(
        "Amendment 2: read_result hides a failed SHA-256",
        REC,
        '"verified": (digest in recorded) if recorded else None',
        '"verified": True if recorded else None',
    ),
    Mutant("restore admission ignored", ACT, "if swaps and self.fits is not None and not self.fits(ids):", "if False:"),
    Mutant(
        "expand: two forms of one original",
        ACT,
        "                if original in standing:\n                    continue",
        "                if False:\n                    continue",
    ),
    Mutant(
        "expand: at the note's place",
        ACT,
        '        view = insert_chronologically(view, back, session)\n        session.set_view(m.id for m in view)\n        self.result = {"success": True, "restored"',
        '        view = view + back\n        session.set_view(m.id for m in view)\n        self.result = {"success": True, "restored"',
    ),
    # -- Amendment 4: the first round and the reset
    Mutant("Amendment 4: reset share 0.15", F, "RESET_SHARE = 0.15", "RESET_SHARE = 0.2"),
    Mutant("Amendment 4: reset share 0.15 (lower)", F, "RESET_SHARE = 0.15", "RESET_SHARE = 0.1"),
    Mutant(
        "Amendment 4: reset not alone",
        F,
        "            self._reset(state, run, reason)  # first, and alone\n            return self._finish(run, state)",
        "            self._reset(state, run, reason)  # first, and alone",
    ),
    Mutant(
        "Amendment 4: reset not first",
        F,
        "        if self.caching and self.notes_estimate(state.view) > RESET_SHARE",
        "        if False and self.notes_estimate(state.view) > RESET_SHARE",
    ),
    Mutant(
        "Amendment 4: reset at the notes' share boundary",
        F,
        "self.notes_estimate(state.view) > RESET_SHARE",
        "self.notes_estimate(state.view) >= RESET_SHARE",
    ),
    Mutant(
        "Amendment 4: no reset after the stages",
        F,
        "        if self.caching and more():\n            self._reset",
        "        if False:\n            self._reset",
    ),
    Mutant(
        "Amendment 4: reset over a floor over the ceiling",
        F,
        "        if self.measure.fits_size(run.floor_estimate):\n            self._fold_pass",
        "        if True:\n            self._fold_pass",
    ),
    Mutant(
        "Amendment 4: stages reach before the newest note",
        F,
        '        start = 0 if stage == "reset" else self.ordinary_start(state.view)',
        "        start = 0",
    ),
    Mutant(
        "Amendment 4: clip reaches before the newest note",
        F,
        "items = eligible_bodies(state.view, record, skip, self.ordinary_start(state.view), bound)",
        "items = eligible_bodies(state.view, record, skip, 0, bound)",
    ),
    Mutant(
        "Amendment 4: the protected round folds",
        F,
        "        return set(protected_ids(self.session, self.policy, view))",
        "        return set()",
    ),
    Mutant("Amendment 4: rules without caching", F, "        return self.policy.caching\n", "        return True\n"),
    Mutant("Amendment 4: a tenth of the ceiling", FR, "SHARE = 10  #", "SHARE = 8  #"),
    Mutant("Amendment 4: equality does not fit", FR, '"included": size * SHARE <= ceiling', '"included": size * SHARE < ceiling'),
    Mutant("Amendment 4: the decision ignores the scale", FR, "    size = estimate(counted, scale)\n", "    size = counted\n"),
    Mutant(
        "Amendment 4: a decision is re-decided",
        FR,
        "    if existing is not None or not policy.caching:\n        return existing",
        "    if not policy.caching:\n        return existing",
    ),
    Mutant(
        "Amendment 4: a pending round is not protected",
        FR,
        "    return frozenset(found.members) if found is not None else frozenset()\n\n\ndef included_ids",
        "    return frozenset()\n\n\ndef included_ids",
    ),
    Mutant(
        "Amendment 4: an excluded round protects",
        FR,
        '        return frozenset(decision["members"]) if decision["included"] else frozenset()\n    found',
        '        return frozenset(decision["members"])\n    found',
    ),
    Mutant(
        "Amendment 4: a note after the task is a first round",
        FR,
        '    if following[0].kind == "note" or following[0].kind not in',
        "    if following[0].kind not in",
        equivalent="core/request/first_round.py, find_round",
    ),
    Mutant(
        "Amendment 4: decided without a ceiling",
        FR,
        "    if ceiling is None:\n        return None  # no fold",
        "    if ceiling is None:\n        ceiling = 10**9  # no fold",
    ),
    Mutant(
        "Amendment 4: a clone missing a member keeps the decision",
        FR,
        '    if not all(m in ids for m in decision["members"]):\n        del cache["protected"]\n        return',
        "    if False:\n        return",
    ),
    # -- the fixes of issue 14 and the places the fold's promises are kept outside core/fold
    Mutant(
        "Amendment 2: the all stage's tail",
        FS,
        "    end = len(view) - tail\n    chosen = [m.id for m in view[start : max(end, 0)] if m.id not in facts.keep]",
        "    end = len(view) - tail + 1\n    chosen = [m.id for m in view[start : max(end, 0)] if m.id not in facts.keep]",
    ),
    Mutant(
        "Amendment 4: the reset's tail of two",
        F,
        '_fold_pass(state, run, "reset", KEEP_TAILS[-1], reason)',
        '_fold_pass(state, run, "reset", KEEP_TAILS[0], reason)',
    ),
    Mutant(
        "Amendment 4: a changed head is never compared",
        FR,
        '    same = round_hash(span, session, policy, decision.get("bound")) == decision["hash"]',
        "    same = True",
    ),
    Mutant(
        "expand: a call back without its result",
        ACT,
        "            if isinstance(result, str) and result in record and result not in standing and result not in present:",
        "            if False:",
    ),
    Mutant(
        "what-if drops the source's compactions", "core/replay/what_if.py", "    gone = was.difference(now)", "    gone: set[str] = set()"
    ),
    Mutant("replay adr: a refusal not recorded", "core/replay/strategies.py", "refused=k in replay.refusals", "refused=False"),
    Mutant(
        "replay adr: the fold without the unseen head", "core/replay/strategies.py", 'head=getattr(measure, "head", None),', "head=None,"
    ),
    Mutant(
        "Amendment 3: a profile merges into the launch record",
        "core/model/policy.py",
        "            policy = replace(self.profile, prompt_caching=caching, model=self.profile.model or base.model)",
        "            policy = policy.with_values(self.profile.source, **{k: getattr(self.profile, k) for k in KEYS})",
    ),
    Mutant(
        "Amendment 3: absent caching erases the stored option",
        "core/model/policy.py",
        "            caching = base.prompt_caching if self.profile.prompt_caching is None else self.profile.prompt_caching",
        "            caching = self.profile.prompt_caching",
    ),
    Mutant(
        "save: a fold record hides the imported manifest",
        "core/formats/lionagi_write.py",
        "    return {**imported, **(session.manifest or {})}",
        "    return session.manifest or imported",
    ),
    Mutant(
        "Amendment 3: fold --apply writes no startup fields",
        "core/cli/fold.py",
        "        write_startup_fields(target, policy, measure.per_call)\n",
        "\n",
    ),
    Mutant(
        "Amendment 2: a copy counted as a tool result",
        "core/cli/basic.py",
        '"clipped_copy" if m.is_clipped_copy else m.kind for m in record',
        "m.kind for m in record",
    ),
    # -- issue 47: the rules a held-out list of changes slipped past
    Mutant(
        "Amendment 3: a result of exactly the bound stays whole (k_N)",
        PROJ,
        "    if len(body.text) <= bound:\n        return len(body.text)",
        "    if len(body.text) < bound:\n        return len(body.text)",
    ),
    Mutant("Amendment 3: a body of exactly the bound is projected whole", PROJ, "and length <= bound:", "and length < bound:"),
    Mutant(
        "Amendment 3: a copy without its original at exactly the bound is sent whole",
        PROJ,
        "return all(len(body.text) <= bound for body",
        "return all(len(body.text) < bound for body",
    ),
    Mutant("Amendment 3: a shortened body keeps both its head and its tail", PROJ, "MIN_KEPT = 2", "MIN_KEPT = 1"),
    Mutant(
        "Amendment 2: a copy whose allowance equals its length is whole",
        PROJ,
        "(allowance is None or allowance >= length)",
        "(allowance is None)",
    ),
    Mutant(
        "Amendment 3: the bounded clip floor honours k_N",
        CUTS,
        "floor = min(CLIP_FLOOR, k_n if k_n is not None else 0)",
        "floor = CLIP_FLOOR",
        equivalent="core/fold/cuts.py, eligible_bodies",
    ),
    Mutant(
        "restore places a message after others with its key",
        ACT,
        "slots.setdefault(bisect_right(peaks,",
        "slots.setdefault(bisect_left(peaks,",
    ),
    Mutant("Amendment 1: a refused fold must land once", F, "        must_land = observed is not None\n", "        must_land = False\n"),
    Mutant(
        "D4: a request carries a call without its result",
        F,
        "        if check_calls and (refusal := self.unanswered_refusal()) is not None:",
        "        if False:",
    ),
    Mutant(
        "D4: a call whose result only the record holds is not named",
        "core/request/plan.py",
        "(result in in_view or (record is not None and result in record))",
        "(result in in_view)",
    ),
    Mutant(
        "Amendment 1: a refused estimate calibrates the fold",
        F,
        "        if observed:\n            counted = self.count_with_head(view)",
        "        if False:\n            counted = self.count_with_head(view)",
    ),
]


def copy_project(into: Path) -> Path:
    """The project copied to `into/foldscope` (sources and tests, no .venv or .git), with `into/shared` linked."""
    project = into / "foldscope"
    ignore = shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache")
    shutil.copytree(ROOT, project, ignore=ignore)
    shared = ROOT.parent / "shared"
    if shared.exists():
        (into / "shared").symlink_to(shared)
    return project


def run_tests(project: Path, python: str, timeout: int) -> tuple[bool, str]:
    """True when every test passes in the copy (the mutant survives)."""
    env = {**os.environ, **ENV, "PYTHONPATH": str(project.parent)}
    cmd = [
        python,
        "-m",
        "pytest",
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:pytest-qt",
        "-W",
        "ignore::pytest.PytestConfigWarning",
        *TESTS,
    ]
    try:
        done = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "timed out (counted as killed)"
    last = (done.stdout.strip().splitlines() or [""])[-1]
    return done.returncode == 0, last


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", metavar="TEXT", action="append", help="only mutants whose name contains TEXT (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per mutant (default 900)")
    args = parser.parse_args(argv)
    mutants = [m for m in MUTANTS if not args.k or any(k.lower() in m.name.lower() for k in args.k)]
    for m in mutants:  # every edit must apply to the tree as it is: a stale mutant is a failure of this list
        text = (ROOT / m.path).read_text(encoding="utf-8")
        if text.count(m.old) != 1:
            print(f"stale mutant {m.name!r}: {m.path} holds its text {text.count(m.old)} times", file=sys.stderr)
            return 2
    if args.list:
        for m in mutants:
            print(f"{m.name}  ({m.path})" + ("  [equivalent]" if m.equivalent else ""))
        return 0
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="foldscope-mutate-") as scratch:
        project = copy_project(Path(scratch))
        clean, last = run_tests(project, python, args.timeout)
        if not clean:
            print(f"the tests fail without any mutant: {last}", file=sys.stderr)
            return 2
        survivors = []
        for n, m in enumerate(mutants, 1):
            target = project / m.path
            original = target.read_text(encoding="utf-8")
            target.write_text(original.replace(m.old, m.new), encoding="utf-8")
            start = time.time()
            try:
                survived, last = run_tests(project, python, args.timeout)
            finally:
                target.write_text(original, encoding="utf-8")
            verdict = ("equivalent" if m.equivalent else "SURVIVED") if survived else "killed"
            print(f"[{n}/{len(mutants)}] {verdict:<10} {m.name} ({time.time() - start:.0f}s)", flush=True)
            if survived:
                survivors.append(m)
    # the rate is over the changes an input can tell apart; a listed equivalent that a test kills is reported
    counted = [m for m in mutants if not m.equivalent]
    survived = [m for m in survivors if not m.equivalent]
    killed = len(counted) - len(survived)
    rate = f"{killed / len(counted):.0%}" if counted else "none counted"
    print(f"\nkilled {killed} of {len(counted)} mutants ({rate}); {len(mutants) - len(counted)} listed as equivalent")
    for m in survived:
        print(f"  survived: {m.name} ({m.path})")
    for m in mutants:
        if m.equivalent and m not in survivors:
            print(f"  killed although listed as equivalent (the comment at {m.equivalent} is wrong): {m.name}")
        elif m.equivalent:
            print(f"  equivalent: {m.name} (shown at {m.equivalent})")
    return 0 if not survived else 1


if __name__ == "__main__":
    sys.exit(main())
