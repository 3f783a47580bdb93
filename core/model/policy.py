"""The ceiling policy (ADR-0130 D1, D2, Amendment 3): validated keys, and the ceiling each request resolves to."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from foldscope.core.model.errors import ReadError

RESULT_MIN_CHARS = 1024  # the smallest result bound Amendment 3 allows


def profile_path(path: str | Path) -> Path:
    """A profile's file: the path as given, else (a bare name such as `caching.yaml` or `caching`) the example
    profile of that name shipped in foldscope's resources."""
    path = Path(path)
    if path.exists() or path.parent != Path("."):
        return path
    from importlib import resources

    for name in (path.name, f"{path.name}.yaml"):
        shipped = resources.files("foldscope.resources").joinpath(name)
        if name.endswith(".yaml") and shipped.is_file():
            return Path(str(shipped))
    return path


class PolicyError(ReadError):
    """A policy value refused: names where it came from, the key and what was wrong."""


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    return f"a {type(value).__name__}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_ceiling(value: Any) -> bool:
    return (isinstance(value, str) and value in ("auto", "none")) or (isinstance(value, int) and not isinstance(value, bool) and value > 0)


def _is_fraction(value: Any) -> bool:
    return _is_number(value) and math.isfinite(value) and 0 < value <= 1


def _is_bound(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= RESULT_MIN_CHARS


def _is_tokens(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


@dataclass(frozen=True)
class PolicyKey:
    """One key of the policy, declared once: the Policy field and profile key, what it takes, what unset reads as,
    the editor's row and the command-line flag. The flags (core.cli.options), the policy editor's rows, a profile's
    validation and docs/cli.md's table of keys (tools/policy_docs.py) are all made from POLICY_KEYS."""

    name: str  # the Policy field, the profile's and the launch record's key
    type: str  # the value's type: "ceiling" (N, auto or none), "fraction", "integer", "boolean" or "text"
    default: Any  # what unset reads as (None: no value; `unset` says what that means)
    label: str  # the editor's row
    flag: str  # the command-line flag (a boolean also takes --no-FLAG)
    help: str  # what the key sets, one line: the flag's help, the editor's tooltip, the docs' row
    takes: str  # the values refused are named against this: "must be {takes}, not ..."
    accepts: Callable[[Any], bool]  # a profile's (already parsed) value is valid
    unset: str = ""  # unset in words, when the default is not a value (e.g. "no bound"); else the default itself
    placeholder: str = ""  # the editor's empty field; else the unset words
    metavar: str | None = None  # the flag's value, as --help shows it
    launch: bool = True  # a launch record stores it (context_window is how foldscope reads, not the agent's setting)
    commands: str = "measuring"  # which commands take the flag: "measuring" (add_policy_flags) or "window" (add_window_flag)

    @property
    def dest(self) -> str:
        """The flag's argparse name: --fold-at is fold_at."""
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def unset_said(self) -> str:
        return self.unset or str(self.default)

    def check(self, value: Any, source: str, place: str | None = None) -> Any:
        """The value if valid, else PolicyError naming where it came from and the key (or `place`)."""
        if not self.accepts(value):
            raise PolicyError(source, self.name if place is None else place, f"must be {self.takes}, not {_kind(value)}")
        return value

    def from_text(self, text: Any) -> Any:
        """A value typed on the command line: a number's text parsed (validated with the policy), else as given."""
        if text is None or self.type in ("boolean", "text"):
            return text
        if self.type == "fraction":
            return _flag_float(str(text), self.name)
        if self.type == "ceiling" and text in ("auto", "none"):
            return text
        return _flag_int(str(text), self.name)


POLICY_KEYS: tuple[PolicyKey, ...] = (
    PolicyKey(
        "max_input_tokens",
        "ceiling",
        "auto",
        label="Ceiling",
        flag="--ceiling",
        metavar="N|auto|none",
        help="the most input tokens a request may carry; auto is the model's first price-tier boundary "
        "(no ceiling when it has one flat tier), none is no ceiling",
        takes='a positive integer, "auto" or "none"',
        accepts=_is_ceiling,
        placeholder="tokens, auto, none",
    ),
    PolicyKey(
        "context_fold_at",
        "fraction",
        0.8,
        label="Line",
        flag="--fold-at",
        metavar="F",
        help="a fold starts when a request reaches this fraction of the ceiling, in (0, 1]",
        takes="a finite number in (0, 1]",
        accepts=_is_fraction,
    ),
    PolicyKey(
        "context_fold_target",
        "fraction",
        0.6,
        label="Target",
        flag="--target",
        metavar="F",
        help="a fold stops when the request is at or under this fraction of the ceiling, below the line",
        takes="a finite number in (0, 1]",
        accepts=_is_fraction,
    ),
    PolicyKey(
        "tool_result_max_chars",
        "integer",
        None,
        label="Result bound",
        flag="--result-max",
        metavar="N",
        help=f"the longest a tool-result body is sent, in characters (at least {RESULT_MIN_CHARS:,}); longer ones are clipped",
        takes=f"an integer of at least {RESULT_MIN_CHARS}",
        accepts=_is_bound,
        unset="no bound",
    ),
    PolicyKey(
        "prompt_caching",
        "boolean",
        None,
        label="Prompt caching",
        flag="--caching",
        help="place cache marks (true) or none (false)",
        takes="true or false",
        accepts=lambda value: isinstance(value, bool),
        unset="the stored option, else as recorded (marks where the file's usage shows cache reads)",
        placeholder="as recorded",
    ),
    PolicyKey(
        "model",
        "text",
        None,
        label="Model",
        flag="--model",
        metavar="M",
        help="the model, for auto and for prices",
        takes="a model name",
        accepts=lambda value: isinstance(value, str),
        unset="the session's",
    ),
    PolicyKey(
        "context_window",
        "integer",
        None,
        label="Window",
        flag="--context-window",
        metavar="N",
        help="the model's context window in tokens, over the file's, the agent's rule, its compactions and the prices",
        takes="a positive whole number of tokens",
        accepts=_is_tokens,
        unset="resolved from those",
        placeholder="resolved",
        launch=False,
        commands="window",
    ),
)
KEY = {key.name: key for key in POLICY_KEYS}
KEYS = tuple(KEY)  # every key a profile takes
AGENT_PROFILE_KEY = "api_tools"  # the key that makes a mapping an agent's profile (Amendment 3), whose other keys are its own
LAUNCH_KEYS = tuple(key.name for key in POLICY_KEYS if key.launch)  # the keys a launch record stores
FOLD_AT: float = KEY["context_fold_at"].default  # the line's default, a fraction of the ceiling
FOLD_TARGET: float = KEY["context_fold_target"].default  # the target's default


def check_ceiling(value: Any, source: str, key: str = "max_input_tokens") -> int | str:
    """A ceiling value: a positive integer, "auto" or "none". Zero, negatives, booleans and numeric strings are refused."""
    return KEY["max_input_tokens"].check(value, source, key)


@dataclass(frozen=True)
class Policy:
    """What a session runs under: a field per entry of POLICY_KEYS, in its order. None means unset, which reads as
    the key's default (the ceiling as auto, the line 0.8, the target 0.6, no result bound, no caching override)."""

    max_input_tokens: int | str | None = None
    context_fold_at: float | None = None
    context_fold_target: float | None = None
    tool_result_max_chars: int | None = None
    prompt_caching: bool | None = None
    model: str | None = None
    context_window: int | None = None  # the model's context window, over every other source (core.readout.agent_limits)
    source: str = "default"  # where it came from: a profile file, "flags", "launch record", ...

    def __post_init__(self) -> None:
        for key in POLICY_KEYS:  # each value alone, as the table says; then the line and target as a pair
            if getattr(self, key.name) is not None:
                key.check(getattr(self, key.name), self.source)
        if not 0 < self.fold_target < self.fold_at <= 1:
            raise PolicyError(
                self.source,
                "context_fold_target",
                f"the pair must satisfy 0 < target < line <= 1, not line {self.fold_at} and target {self.fold_target}",
            )

    @property
    def fold_at(self) -> float:
        """The effective line: context_fold_at, else its default."""
        return FOLD_AT if self.context_fold_at is None else self.context_fold_at

    @property
    def fold_target(self) -> float:
        """The effective target: context_fold_target, else its default."""
        return FOLD_TARGET if self.context_fold_target is None else self.context_fold_target

    @property
    def caching(self) -> bool:
        return bool(self.prompt_caching)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str, *, stored: bool = False) -> Policy:
        """A policy from parsed YAML or JSON values; a key that is not a policy key is refused by name, unless the
        mapping is an agent's profile (it declares api_tools: Amendment 3 lets such a profile carry the policy keys
        beside its own, which are left to their owner).

        In a profile an explicit null is refused; in a stored launch record (`stored=True`) null
        stands for an absent setting, as Amendment 3 stores them.
        """
        if not isinstance(data, Mapping):
            raise PolicyError(source, "", f"a policy must be a mapping of keys, not {_kind(data)}")
        if AGENT_PROFILE_KEY not in data:  # a policy file: every key is a policy key, and a slip is named
            for key in data:
                if key not in KEY:
                    raise PolicyError(source, str(key), _unknown(str(key)))
        values: dict[str, Any] = {}
        for key in KEYS:
            if key not in data:
                continue
            if data[key] is None:
                if stored:
                    continue
                raise PolicyError(source, key, "must not be null; leave the key out to leave it unset")
            values[key] = data[key]
        return cls(**values, source=source)

    @classmethod
    def from_yaml(cls, path: str | Path) -> Policy:
        """A policy from a YAML profile file; a bad file or value raises PolicyError naming the file and key."""
        import yaml

        path = profile_path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise PolicyError(str(path), "", f"cannot read the profile: {exc.strerror or exc}") from None
        except (yaml.YAMLError, UnicodeError) as exc:
            raise PolicyError(str(path), "", f"not valid YAML: {str(exc).splitlines()[0]}") from None
        except RecursionError:
            raise PolicyError(str(path), "", "not a profile: nested too deeply to read") from None
        return cls.from_mapping(data if data is not None else {}, str(path))

    @classmethod
    def from_flags(cls, base: Policy | None = None, **texts: Any) -> Policy:
        """A policy from command-line text, given by each key's flag name (`fold_at="0.9"`, `caching=True`); flags
        override a profile's keys, and a refused value names its key."""
        flags = {key.dest: key for key in POLICY_KEYS}
        unknown = sorted(set(texts) - set(flags))
        if unknown:
            raise TypeError(f"from_flags: no policy flag {', '.join(unknown)}")
        changes = {flags[dest].name: flags[dest].from_text(text) for dest, text in texts.items()}
        if base is not None and all(v is None for v in changes.values()):
            return base
        return (base or cls()).with_values("flags" if base is None else f"{base.source} and flags", **changes)

    def with_values(self, source: str | None = None, **changes: Any) -> Policy:
        """This policy with some keys replaced (a None change leaves the key as it is)."""
        current = {f.name: getattr(self, f.name) for f in fields(self)}
        current.update({k: v for k, v in changes.items() if v is not None})
        if source is not None:
            current["source"] = source
        return Policy(**current)

    def as_record(self) -> dict[str, Any]:
        """The launch-policy form kept in branch metadata: every launch key, null for unset."""
        return {key: getattr(self, key) for key in LAUNCH_KEYS}

    def as_profile(self) -> dict[str, Any]:
        """Every key a profile takes, null for unset: what tells two policies apart on screen."""
        return {key: getattr(self, key) for key in KEYS}


@dataclass(frozen=True)
class PolicyChoice:
    """The policy a person chose at start (a profile, then flags, and a per-call ceiling), before a session is known.

    A session's policy is its launch record with this choice over it (core.model.launch.session_policy):
    the CLI's measuring commands and the GUI resolve it the same way, from the same flags.
    """

    profile: Policy | None = None
    flags: tuple[tuple[str, Any], ...] = ()  # (key, validated value) for each flag given
    per_call: int | str | None = None

    def over(self, base: Policy) -> Policy:
        """`base` (a launch record's policy), or the profile in its place, then the flags over it.

        A profile replaces the stored policy (Amendment 3: a resume with a profile uses that profile's settings,
        including their unset values), so a bound or fold pair it leaves out is removed, not kept; only
        prompt_caching survives its absence (absence never erases a stored option; disabling needs false)."""
        policy = base
        if self.profile is not None:
            caching = base.prompt_caching if self.profile.prompt_caching is None else self.profile.prompt_caching
            policy = replace(self.profile, prompt_caching=caching, model=self.profile.model or base.model)
        if self.flags:
            source = "flags" if policy.source == "default" else f"{policy.source} and flags"
            policy = policy.with_values(source, **dict(self.flags))
        return policy


def ceiling_from_text(text: str | None) -> int | str | None:
    """A ceiling typed on the command line: "auto", "none" or an integer (validated when resolved)."""
    return KEY["max_input_tokens"].from_text(text)


def _unknown(key: str) -> str:
    import difflib

    names = {alias: k.name for k in POLICY_KEYS for alias in (k.dest, k.name)}  # a flag's name is a likely slip
    near = difflib.get_close_matches(key, names, n=1)
    guess = f"did you mean {names[near[0]]}? " if near else ""
    agents = f"an agent's profile, one with {AGENT_PROFILE_KEY}, may hold keys of its own too"
    return f"not a policy key: {guess}a profile takes {', '.join(KEYS)} ({agents})"


def _flag_int(text: str, key: str) -> int:
    text = text.strip()
    # Commas only as every screen prints a number (100,000): '1,00' or '100,00' is a slip, never 100 or 10,000.
    if "," in text and not re.fullmatch(r"[+-]?\d{1,3}(?:,\d{3})+", text):
        raise PolicyError("flags", key, f"must be an integer, with commas only between groups of three digits, not {text!r}")
    try:
        return int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise PolicyError("flags", key, f"must be an integer, not {text!r}") from None


def _flag_float(text: str, key: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise PolicyError("flags", key, f"must be a number, not {text!r}") from None


@dataclass(frozen=True)
class Resolution:
    """The ceiling a request runs under and where it came from (D7): default, auto, profile, none or call."""

    ceiling: int | None
    source: str
    why: str


def resolve_auto(model: str | None, source: str) -> Resolution:
    """`auto`: the model's first price-tier boundary from whichever source prices it, else no ceiling, saying why (D2)."""
    from foldscope.core.model import pricing  # the price table, read only where a ceiling is resolved

    found = pricing.resolve(model)
    if not found.known:
        why = f"{found.reason}, so auto is no ceiling" if model else "no model named, so auto is no ceiling"
        return Resolution(None, source, why)
    boundary = found.first_boundary
    if boundary is None:
        return Resolution(None, source, f"{found.name} has one flat price tier, so auto is no ceiling")
    return Resolution(
        boundary, source, f"auto: the first price tier of {found.name} ends at {boundary:,} prompt tokens ({found.source or 'table'})"
    )


def _resolve_set(value: int | str, policy: Policy, model: str | None) -> Resolution:
    if value == "auto":
        return resolve_auto(model, "auto")
    if value == "none":
        return Resolution(None, "none", f"max_input_tokens is none in {policy.source}: no ceiling")
    return Resolution(int(value), "profile", f"max_input_tokens is {value:,} in {policy.source}")


def resolve_ceiling(policy: Policy | None, model: str | None = None, per_call: int | str | None = None) -> Resolution:
    """The resolved ceiling: unset reads as auto; a per-call value may lower it and never raise it."""
    policy = policy or Policy()
    model = model or policy.model
    value = policy.max_input_tokens
    if value is None:  # unset reads as the key's default (D1: auto)
        default = KEY["max_input_tokens"].default
        base = _resolve_set(default, policy, model)
        base = Resolution(base.ceiling, "default", f"unset, read as {default}: {base.why.removeprefix(f'{default}: ')}")
    else:
        base = _resolve_set(value, policy, model)
    if per_call is None:
        return base
    check_ceiling(per_call, "the call")
    if per_call == "none":
        if base.ceiling is not None:
            raise PolicyError(
                "the call",
                "max_input_tokens",
                f'"none" would raise the ceiling of {base.ceiling:,} ({base.source}); a call may only lower it',
            )
        return Resolution(None, "call", "the call asks for no ceiling, and none was set")
    call = resolve_auto(model, "call") if per_call == "auto" else Resolution(int(per_call), "call", f"the call sets {per_call:,}")
    if base.ceiling is not None and (call.ceiling is None or call.ceiling > base.ceiling):
        shown = "no ceiling" if call.ceiling is None else f"{call.ceiling:,}"
        raise PolicyError(
            "the call", "max_input_tokens", f"{shown} would raise the ceiling of {base.ceiling:,} ({base.source}); a call may only lower it"
        )
    return call
