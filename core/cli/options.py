"""The options every measuring command shares, declared once and resolved one way.

`fold`, `requests`, `replay` (and the GUI, core.cli.options.policy_choice over its own parser) take the same
policy flags: `--ceiling`, `--model`, `--per-call`, `--fold-at`, `--target`, `--result-max`, `--caching` /
`--no-caching` (unset keeps the stored option, as Amendment 3 says) and `--profile`. They become one
PolicyChoice, checked before any file is read; each session's policy is its launch record with the choice
over it (core.model.launch.session_policy), and its Measure resolves the ceiling (a per-call value may lower
it, never raise it). A list option accepts repetition and commas; processes are `--workers`, tokenizer
threads `--threads`. A flag a command cannot honour is refused by name (`refuse`), never ignored. The commands
that show the context window (`inspect`, `composition`, `report` and the GUI) also take `--context-window N`
(`add_window_flag`), the window over every other source (core.readout.agent_limits); the others do not offer it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from foldscope.core.cli.main import UsageError
from foldscope.core.cli.output import terminal_safe
from foldscope.core.model.launch import session_policy
from foldscope.core.model.policy import Policy, PolicyChoice, PolicyError, ceiling_from_text, check_ceiling
from foldscope.core.model.session import Session, estimated_usage
from foldscope.core.request.count import Counter
from foldscope.core.request.measure import Measure

POLICY_FLAGS = ("ceiling", "per_call", "fold_at", "target", "result_max", "caching", "model", "profile")


def add_policy_flags(parser: argparse.ArgumentParser) -> None:
    """The policy flags every measuring command takes; a profile's keys override the launch record's, flags both."""
    parser.add_argument(
        "--ceiling", metavar="N|auto|none", help="max_input_tokens: a positive integer, auto (the model's first price tier) or none"
    )
    parser.add_argument("--per-call", metavar="N|auto|none", help="a per-call ceiling: lowers the resolved ceiling, refused above it")
    parser.add_argument("--fold-at", metavar="F", help="context_fold_at, the line (default 0.8)")
    parser.add_argument("--target", metavar="F", help="context_fold_target (default 0.6)")
    parser.add_argument("--result-max", metavar="N", help="tool_result_max_chars, the result bound (at least 1024)")
    parser.add_argument(
        "--caching",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="prompt_caching: place cache marks (--no-caching: place none; unset: the stored option)",
    )
    parser.add_argument("--model", metavar="M", help="the model, for auto and pricing (default: the session's)")
    parser.add_argument("--profile", metavar="YAML", help="a YAML profile with the policy keys")
    parser.add_argument("--prices", metavar="FILE", help="a prices.json whose models override every other price")


def add_window_flag(parser: argparse.ArgumentParser) -> None:
    """`--context-window N`: the model's context window, over the file's, the agent's and the prices' (the policy's
    context_window key)."""
    parser.add_argument(
        "--context-window", metavar="N", help="the model's context window in tokens, over the file's, the agent's and the prices'"
    )


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
    profile = Policy.from_yaml(args.profile) if getattr(args, "profile", None) else None
    flagged = Policy.from_flags(
        ceiling=getattr(args, "ceiling", None),
        fold_at=_text(getattr(args, "fold_at", None)),
        target=_text(getattr(args, "target", None)),
        result_max=_text(getattr(args, "result_max", None)),
        caching=getattr(args, "caching", None),
        model=getattr(args, "model", None),
        window=_text(getattr(args, "context_window", None)),
    )
    keys = {
        "ceiling": "max_input_tokens",
        "fold_at": "context_fold_at",
        "target": "context_fold_target",
        "result_max": "tool_result_max_chars",
        "caching": "prompt_caching",
        "model": "model",
        "context_window": "context_window",
    }
    flags = tuple((key, getattr(flagged, key)) for name, key in keys.items() if getattr(args, name, None) is not None)
    per_call = ceiling_from_text(getattr(args, "per_call", None))
    if per_call is not None:
        per_call = check_ceiling(per_call, "flags", "--per-call")
    return PolicyChoice(profile, flags, per_call)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def measure_for(session: Session, choice: PolicyChoice, *, threads: int | None = None, counter: Counter | None = None) -> Measure:
    """The session's Measure under its launch record with the choice over it; a per-call value above the
    resolved ceiling is refused here (PolicyError)."""
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
    "measure_for",
    "measure_from_args",
    "policy_choice",
    "refuse",
]


def read_session(path: Any, input_format: str | None = None, sample: str | None = None) -> Session:
    """A session file read for a command, with its reader's warnings said on stderr (`say_warnings`)."""
    from foldscope.core.formats import load_session
    from foldscope.core.request.ahead import prestart

    prestart(path)  # the count that follows the read may want a counting child: it starts meanwhile
    session = load_session(path, input_format, sample)
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
    why = estimated_usage(session)
    return {**result, "usage_estimated": why} if why else result
