"""The launch policy kept with a session, and the run manifest's three startup fields (ADR-0130 Amendment 3).

Branch metadata `api_launch` stores the requested settings, null for absent ones; an older record
without a key reads it as unset, and a stored malformed value is refused (PolicyError). The
manifest's startup fields describe the invocation: `prompt_caching` (whether this endpoint places
the cache: foldscope compiles the Anthropic Messages shape, which declares it, so it is the
effective option), `tool_result_max_chars` (the effective bound or null) and `context_fold`
(`{"fold_at", "target"}` of the installed fold, null without a resolved ceiling).
"""

from __future__ import annotations

from typing import Any

from foldscope.core.model.policy import LAUNCH_KEYS, Policy, PolicyChoice, resolve_ceiling
from foldscope.core.model.session import Session

LAUNCH_KEY = "api_launch"


def read_launch_policy(session: Session) -> Policy:
    """The policy the session was launched with: null and absent read as unset; a malformed value is refused."""
    launch = session.branch_metadata.get(LAUNCH_KEY)
    if not isinstance(launch, dict):
        return Policy(source="default")
    source = f"{session.source or 'the session'}: metadata.{LAUNCH_KEY}"
    return Policy.from_mapping({k: launch[k] for k in LAUNCH_KEYS if k in launch}, source, stored=True)


def session_policy(session: Session, choice: PolicyChoice | None = None) -> Policy:
    """The one policy a session is measured and folded under: its launch record (read here, once), with the
    profile and flags chosen at start over it. A malformed launch record is refused (PolicyError)."""
    base = read_launch_policy(session)
    return base if choice is None else choice.over(base)


def store_launch_policy(session: Session, policy: Policy) -> None:
    """Keep the requested settings in branch metadata (every key, null for unset), beside the record's other launch facts."""
    launch = session.branch_metadata.get(LAUNCH_KEY)
    if not isinstance(launch, dict):
        launch = session.branch_metadata[LAUNCH_KEY] = {}
    launch.update(policy.as_record())


def startup_fields(session: Session, policy: Policy, per_call: int | str | None = None) -> dict[str, Any]:
    """The three startup fields for this invocation under `policy`."""
    ceiling = resolve_ceiling(policy, policy.model or session.model, per_call).ceiling
    return {
        # The endpoint's answer after settings are applied (Amendment 3's run record): foldscope places marks only when
        # caching is on, so unset (caching as recorded, core.model.caching) is false here; the request, null, is api_launch's.
        "prompt_caching": policy.caching,
        "tool_result_max_chars": policy.tool_result_max_chars,
        "context_fold": None if ceiling is None else {"fold_at": policy.fold_at, "target": policy.fold_target},
    }


def write_startup_fields(session: Session, policy: Policy, per_call: int | str | None = None) -> dict[str, Any]:
    """Write the startup fields at the top of the session's manifest (made when absent), before any request;
    other manifest keys (api_usage, context_folds) are left as they are. Returns the fields written."""
    fields = startup_fields(session, policy, per_call)
    if session.manifest is None:
        session.manifest = {}
    session.manifest.update(fields)
    return fields


def to_save(session: Session, policy: Policy, per_call: int | str | None = None) -> Session:
    """The session as a Save writes it under `policy`: its launch record and the three startup fields set, on a
    copy, so saving changes nothing the undo history holds (Amendment 3: the file says what it ran under)."""
    import copy
    from dataclasses import replace

    out = replace(session, branch=copy.deepcopy(session.branch), manifest=copy.deepcopy(session.manifest))
    store_launch_policy(out, policy)
    write_startup_fields(out, policy, per_call)
    return out
