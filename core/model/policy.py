"""The ceiling policy (ADR-0130 D1, D2, Amendment 3): validated keys, and the ceiling each request resolves to."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from foldscope.core.model import pricing
from foldscope.core.model.session import ReadError

FOLD_AT = 0.8  # the line's default, a fraction of the ceiling
FOLD_TARGET = 0.6  # the target's default
RESULT_MIN_CHARS = 1024  # the smallest result bound Amendment 3 allows
# The keys a launch record stores (Amendment 3's, and the model); a profile also takes context_window, the window
# foldscope reads the session against, which is not the agent's launch setting and so is never stored with it.
LAUNCH_KEYS = ("max_input_tokens", "context_fold_at", "context_fold_target", "tool_result_max_chars", "prompt_caching", "model")
KEYS = (*LAUNCH_KEYS, "context_window")


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


def check_ceiling(value: Any, source: str, key: str = "max_input_tokens") -> int | str:
    """A ceiling value: a positive integer, "auto" or "none". Zero, negatives, booleans and numeric strings are refused."""
    if isinstance(value, str) and value in ("auto", "none"):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise PolicyError(source, key, f'must be a positive integer, "auto" or "none", not {_kind(value)}')


def _check_fraction(value: Any, source: str, key: str) -> float:
    if not _is_number(value) or not math.isfinite(value) or not 0 < value <= 1:
        raise PolicyError(source, key, f"must be a finite number in (0, 1], not {_kind(value)}")
    return float(value)


def _check_bound(value: Any, source: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < RESULT_MIN_CHARS:
        raise PolicyError(source, "tool_result_max_chars", f"must be an integer of at least {RESULT_MIN_CHARS}, not {_kind(value)}")
    return value


@dataclass(frozen=True)
class Policy:
    """What a session runs under. None means unset: the ceiling reads as auto, the line 0.8, the target 0.6,
    no result bound, and no caching override."""

    max_input_tokens: int | str | None = None
    context_fold_at: float | None = None
    context_fold_target: float | None = None
    tool_result_max_chars: int | None = None
    prompt_caching: bool | None = None
    model: str | None = None
    context_window: int | None = None  # the model's context window, over every other source (core.readout.agent_limits)
    source: str = "default"  # where it came from: a profile file, "flags", "launch record", ...

    def __post_init__(self) -> None:
        if self.max_input_tokens is not None:
            check_ceiling(self.max_input_tokens, self.source)
        if self.context_fold_at is not None:
            _check_fraction(self.context_fold_at, self.source, "context_fold_at")
        if self.context_fold_target is not None:
            _check_fraction(self.context_fold_target, self.source, "context_fold_target")
        if not 0 < self.fold_target < self.fold_at <= 1:
            raise PolicyError(
                self.source,
                "context_fold_target",
                f"the pair must satisfy 0 < target < line <= 1, not line {self.fold_at} and target {self.fold_target}",
            )
        if self.tool_result_max_chars is not None:
            _check_bound(self.tool_result_max_chars, self.source)
        if self.prompt_caching is not None and not isinstance(self.prompt_caching, bool):
            raise PolicyError(self.source, "prompt_caching", f"must be true or false, not {_kind(self.prompt_caching)}")
        if self.model is not None and not isinstance(self.model, str):
            raise PolicyError(self.source, "model", f"must be a model name, not {_kind(self.model)}")
        if self.context_window is not None and (
            not isinstance(self.context_window, int) or isinstance(self.context_window, bool) or self.context_window < 1
        ):
            raise PolicyError(self.source, "context_window", f"must be a positive whole number of tokens, not {_kind(self.context_window)}")

    @property
    def fold_at(self) -> float:
        """The effective line: context_fold_at, else 0.8."""
        return FOLD_AT if self.context_fold_at is None else self.context_fold_at

    @property
    def fold_target(self) -> float:
        """The effective target: context_fold_target, else 0.6."""
        return FOLD_TARGET if self.context_fold_target is None else self.context_fold_target

    @property
    def caching(self) -> bool:
        return bool(self.prompt_caching)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str, *, stored: bool = False) -> Policy:
        """A policy from parsed YAML or JSON values. Unknown keys are left to their owners.

        In a profile an explicit null is refused; in a stored launch record (`stored=True`) null
        stands for an absent setting, as Amendment 3 stores them.
        """
        if not isinstance(data, Mapping):
            raise PolicyError(source, "", f"a policy must be a mapping of keys, not {_kind(data)}")
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
    def from_flags(
        cls,
        base: Policy | None = None,
        *,
        ceiling: str | None = None,
        fold_at: str | None = None,
        target: str | None = None,
        result_max: str | None = None,
        caching: bool | None = None,
        model: str | None = None,
        window: str | None = None,
    ) -> Policy:
        """A policy from command-line text (flags override a profile's keys); names the flag's key when refused."""
        changes: dict[str, Any] = {"model": model, "prompt_caching": caching}
        if window is not None:
            changes["context_window"] = _flag_int(window, "context_window")
        if ceiling is not None:
            changes["max_input_tokens"] = ceiling_from_text(ceiling)
        if fold_at is not None:
            changes["context_fold_at"] = _flag_float(fold_at, "context_fold_at")
        if target is not None:
            changes["context_fold_target"] = _flag_float(target, "context_fold_target")
        if result_max is not None:
            changes["tool_result_max_chars"] = _flag_int(result_max, "tool_result_max_chars")
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
    if text is None or text in ("auto", "none"):
        return text
    return _flag_int(text, "max_input_tokens")


def _flag_int(text: str, key: str) -> int:
    try:
        return int(text.strip().replace("_", "").replace(",", ""))
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


def resolve_ceiling(policy: Policy | None, model: str | None = None, per_call: int | str | None = None) -> Resolution:
    """The resolved ceiling: unset reads as auto; a per-call value may lower it and never raise it."""
    policy = policy or Policy()
    model = model or policy.model
    value = policy.max_input_tokens
    if value is None:
        base = resolve_auto(model, "default")
        base = Resolution(base.ceiling, "default", f"unset, read as auto: {base.why.removeprefix('auto: ')}")
    elif value == "auto":
        base = resolve_auto(model, "auto")
    elif value == "none":
        base = Resolution(None, "none", f"max_input_tokens is none in {policy.source}: no ceiling")
    else:
        base = Resolution(int(value), "profile", f"max_input_tokens is {value:,} in {policy.source}")
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
