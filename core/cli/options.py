"""The options every measuring command shares, declared once and resolved one way.

`fold`, `requests`, `replay`, `composition`, `report` (and the GUI) take a flag per policy key, made from the one table
of keys (core.model.policy.POLICY_KEYS: its flag, help and default), and `--per-call` and `--profile` (`add_policy_flags`;
a boolean key also takes `--no-FLAG`, and unset keeps the stored option, as Amendment 3 says). They become one
PolicyChoice, checked before any file is read; each session's policy is its launch record with the choice
over it (core.model.launch.session_policy), and its Measure resolves the ceiling (a per-call value may lower
it, never raise it). A list option accepts repetition and commas; processes are `--workers`, tokenizer
threads `--threads`. A flag a command cannot honour is refused by name (`refuse`), never ignored. The commands
that show the context window (`inspect`, `composition`, `report` and the GUI) also take the context_window key's
`--context-window N` (`add_window_flag`), the window over every other source (core.readout.agent_limits); the others
do not offer it. tools/policy_docs.py writes docs/cli.md's section on these flags from the same table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foldscope.core.cli.main import UsageError
from foldscope.core.cli.output import terminal_safe
from foldscope.core.model.folders import is_folder  # re-exported: the commands ask it here
from foldscope.core.model.policy import POLICY_KEYS, PolicyError, PolicyKey

if TYPE_CHECKING:  # imported where used: declaring the flags (every command's parser, the GUI's --help) needs none
    from foldscope.core.forensics.literals_during_read import ChecksDuringRead
    from foldscope.core.model.policy import PolicyChoice
    from foldscope.core.model.session import Session
    from foldscope.core.request.count import Counter
    from foldscope.core.request.counting.during_read import DuringRead
    from foldscope.core.request.measure import Measure

# The flags that are no policy key: a per-call ceiling, a profile, a prices file.
OTHER_FLAGS = (
    ("--per-call", "N|auto|none", "a per-call ceiling: lowers the resolved ceiling, refused above it"),
    ("--profile", "YAML", "a YAML profile of the policy keys (a bare name such as caching.yaml: a shipped example)"),
    ("--prices", "FILE", "a prices.json whose models override every other price"),
)
POLICY_FLAGS = (*(key.dest for key in POLICY_KEYS if key.commands == "measuring"), "per_call", "profile")


def flag_help(key: PolicyKey) -> str:
    """A key's --help line: the key, what it sets, and what it reads as when neither the flag nor the launch record set it."""
    return f"{key.name}: {key.help} (default: {key.unset_said})"


def _add_key_flag(parser: argparse.ArgumentParser, key: PolicyKey) -> None:
    if key.type == "boolean":
        parser.add_argument(key.flag, action=argparse.BooleanOptionalAction, default=None, help=flag_help(key))
    else:
        parser.add_argument(key.flag, metavar=key.metavar, help=flag_help(key))


def add_policy_flags(parser: argparse.ArgumentParser) -> None:
    """The policy flags every measuring command takes (one per key of POLICY_KEYS, then --per-call, --profile and
    --prices); a profile's keys override the launch record's, flags both. Unset, a flag leaves the key as the launch
    record has it."""
    for key in POLICY_KEYS:
        if key.commands == "measuring":
            _add_key_flag(parser, key)
    for flag, metavar, help in OTHER_FLAGS:
        parser.add_argument(flag, metavar=metavar, help=help)


def add_window_flag(parser: argparse.ArgumentParser) -> None:
    """`--context-window N`: the policy's context_window key, the model's context window over every other source."""
    for key in POLICY_KEYS:
        if key.commands == "window":
            _add_key_flag(parser, key)


def add_head_flag(parser: argparse.ArgumentParser) -> None:
    """`--head FILE`: Claude Code's `/context` output pasted into a file, the unseen head's parts as the agent counted
    them (core.readout.head_split)."""
    parser.add_argument(
        "--head",
        metavar="FILE",
        help="Claude Code's /context output pasted into a file: the unseen head split by its figures (system prompt, tools, MCP, memory)",
    )


def use_head(args: Any) -> None:
    """Read --head for the session file args.file, before the session is read (a damaged file: one line, exit 2)."""
    if getattr(args, "head", None):
        from foldscope.core.readout.head_split import use_head_file

        use_head_file(args.file, args.head)


def add_threads(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--threads", type=positive, metavar="N", help="tokenizer threads (default 1)")


def add_workers(parser: argparse.ArgumentParser, what: str = "processes") -> None:
    parser.add_argument("--workers", type=positive, metavar="N", help=f"{what} (default: CPU count)")


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}")
    return value


class ListAction(argparse.Action):
    """A list option: `--strategy adr --strategy band` is `--strategy adr,band`; each name checked against choices."""

    def __init__(self, option_strings, dest, names: Sequence[str] | None = None, **kwargs) -> None:
        self.names = tuple(names) if names is not None else None
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        items = list(getattr(namespace, self.dest, None) or [])
        for name in (part.strip() for part in str(values).split(",")):
            if not name:
                continue
            if self.names is not None and name not in self.names:
                parser.error(f"{option_string}: {name!r} is not one of {', '.join(self.names)}")
            if name not in items:
                items.append(name)
        setattr(namespace, self.dest, items)


def add_list(parser: argparse.ArgumentParser, flag: str, names: Sequence[str] | None, metavar: str, help: str) -> None:
    parser.add_argument(flag, action=ListAction, names=names, metavar=metavar, default=None, help=f"{help}; repeat or separate by commas")


def policy_choice(args: Any) -> PolicyChoice:
    """The profile and flags given, checked now (before any file is read): one clear line when refused."""
    from foldscope.core.model.policy import Policy, PolicyChoice, ceiling_from_text, check_ceiling

    profile = Policy.from_yaml(args.profile) if getattr(args, "profile", None) else None
    given = {key.dest: getattr(args, key.dest) for key in POLICY_KEYS if getattr(args, key.dest, None) is not None}
    try:
        flagged = Policy.from_flags(**given)  # each value and the line and target pair, validated as one policy
    except PolicyError as refused:  # named by the flag typed and the key it sets: --ceiling (max_input_tokens)
        typed = {key.name: key.flag for key in POLICY_KEYS if key.dest in given}
        if refused.place not in typed:
            raise
        raise PolicyError(refused.file, f"{typed[refused.place]} ({refused.place})", refused.problem) from None
    flags = tuple((key.name, getattr(flagged, key.name)) for key in POLICY_KEYS if key.dest in given)
    text = getattr(args, "per_call", None)
    try:
        per_call = ceiling_from_text(text)
    except PolicyError:  # it is read as the ceiling is, but the flag given is --per-call: name that one
        raise PolicyError("flags", "--per-call", f'must be a positive integer, "auto" or "none", not {text!r}') from None
    if per_call is not None:
        per_call = check_ceiling(per_call, "flags", "--per-call")
    return PolicyChoice(profile, flags, per_call)


def measure_for(session: Session, choice: PolicyChoice, *, threads: int | None = None, counter: Counter | None = None) -> Measure:
    """The session's Measure under its launch record with the choice over it; a per-call value above the
    resolved ceiling is refused here (PolicyError)."""
    from foldscope.core.model.launch import session_policy
    from foldscope.core.request.count import Counter
    from foldscope.core.request.measure import Measure

    policy = session_policy(session, choice)
    return Measure(session, policy, per_call=choice.per_call, counter=counter or Counter(threads))


def measure_from_args(args: Any, session: Session, counter: Counter | None = None) -> Measure:
    return measure_for(session, policy_choice(args), threads=getattr(args, "threads", None), counter=counter)


def refuse(args: Any, names: Iterable[str], why: str) -> None:
    """Refuse by name each of these flags the user gave: the command cannot honour it (`why`)."""
    given = [name for name in names if getattr(args, name, None) not in (None, False, [])]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise UsageError(f"{flags}: {why}")


__all__ = [
    "POLICY_FLAGS",
    "ListAction",
    "PolicyError",
    "UsageError",
    "add_list",
    "add_policy_flags",
    "add_threads",
    "add_window_flag",
    "add_workers",
    "is_folder",
    "measure_for",
    "measure_from_args",
    "policy_choice",
    "refuse",
    "refuse_when_nothing_read",
]


def read_session(
    path: Any, input_format: str | None = None, sample: str | None = None, during: DuringRead | ChecksDuringRead | None = None
) -> Session:
    """A session file read for a command, with its reader's warnings said on stderr (`say_warnings`). `during`: a
    child forked partway through the read counts the record's start (core.request.counting.during_read) or checks
    the compactions read by then (core.forensics.literals_during_read); in that child this never returns."""
    from foldscope.core.formats import load_session
    from foldscope.core.request.counting.backend import hint, spawn_due

    # About to be read and counted: a counting child the count will want starts during the read (with a `during`, it
    # is forked at its cut once the encoding is built, rather than spawned now to build its own).
    hint(path, forked=during is not None)
    if during is not None:
        during.arm()
    try:
        session = load_session(path, input_format, sample)
    except BaseException:
        if during is not None:
            during.failed()  # in the forked child: it exits here, never into the command's own handling
        raise
    finally:
        if during is not None:
            during.disarm()
    if during is not None:
        during.read_ended(session)  # the forked child counts, answers and exits here
        spawn_due()  # no cut forked the counting child (a format without the line reader's cuts): spawned now
    say_warnings(session.warnings)
    return session


def say_warnings(warnings: Sequence[str]) -> None:
    """A reader's warnings on stderr, two lines at most: the first, then how many more (inspect lists them all),
    so a truncated line or a figure read as unknown is never passed over in silence, nor floods the terminal."""
    if not warnings:
        return
    print("warning: " + terminal_safe(warnings[0]), file=sys.stderr)
    if len(warnings) > 1:
        print(f"warning: and {len(warnings) - 1} more (`foldscope inspect FILE` lists every one)", file=sys.stderr)


def with_estimate_said(session: Session, result: dict[str, Any]) -> dict[str, Any]:
    """A result with `usage_estimated` when the session's usage is foldscope's estimate (core.model.session), so the
    JSON names it as every screen does; other results unchanged."""
    from foldscope.core.model.session import estimated_usage

    why = estimated_usage(session)
    return {**result, "usage_estimated": why} if why else result


def folder_files(folder: Path) -> list[Path]:
    """The files a folder command (replay, cache, compactions) reads: the folder's own files but hidden ones (aider's
    default history kept: tune.listed), whatever their names, and the session files in the folders under it as `usage`
    and `tune` find them (core.replay.tune's session_paths: hidden folders and a Claude Code session's subagents/ left
    out, each read with its session; a Cline task once; an OpenCode storage's message and part files with their
    session), so one folder holds the same sessions on every command."""
    from foldscope.core.formats.discover import session_entries
    from foldscope.core.replay.tune import listed, session_paths

    own = {str(p) for p in folder.iterdir() if p.is_file() and listed(p.name)}
    return [Path(p) for p in session_entries(sorted(own | set(session_paths([str(folder)]))))]


def refuse_when_nothing_read(paths: list[str], from_library: bool, results: list[dict[str, Any]]) -> None:
    """Files named alone (no folder, not the library) of which none could be read are the command's error, said in
    the first one's line as `cache` and `replay` say it: an all-zero table that exits 0 reads as a summary."""
    if from_library or any(is_folder(p) for p in paths) or not results or any("error" not in r for r in results):
        return
    raise UsageError(results[0]["error"])
