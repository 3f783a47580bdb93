"""Prompt caching as the policy and the session decide it (on, off, or as recorded), in the words every screen shows."""

from __future__ import annotations

from dataclasses import dataclass

from foldscope.core.model.policy import Policy
from foldscope.core.model.providers import is_openai_model
from foldscope.core.model.session import Session

AS_RECORDED = "as recorded"
AS_RECORDED_WORDS = "caching as recorded"  # the tune label's words for an unset setting (core.replay.tune.caching_words)


@dataclass(frozen=True)
class Caching:
    """One caching setting's truth: `setting` is "on", "off" or "as recorded" (prompt_caching left unset: the session's
    own caching, read from its usage); `modelled` the cache the replay models ("marks", "automatic" or "off");
    `placed` whether foldscope's compile puts marks in the request (only when on); `words` the line every screen says."""

    setting: str
    modelled: str
    placed: bool
    words: str


def shows_caching(session: Session) -> bool:
    """Whether the file's reported usage shows the provider caching (a cache read or write on any request)."""
    return any(r.usage and (r.usage.cache_read or r.usage.cache_write) for r in session.trace)


def session_model(policy: Policy, session: Session) -> str:
    """The model caching is decided for, as the Measure resolves it, without a provider prefix."""
    name = policy.model or session.model or next((r.model for r in session.trace if r.model), None) or ""
    return name.rsplit("/", 1)[-1]


def caching_of(policy: Policy, session: Session, model: str | None = None) -> Caching:
    """How caching stands for this session under this policy. Left unset it is *as recorded*: marks where the file's
    usage shows cache reads (the agent placed its own; the replay models them where ADR-0127 puts them), none where it
    shows none. foldscope's compile places marks only when caching is on, whatever the recording did."""
    said = policy.prompt_caching
    setting = AS_RECORDED if said is None else "on" if said else "off"
    model = session_model(policy, session) if model is None else model
    if is_openai_model(model):
        note = (
            ""
            if said is None
            else f"; prompt_caching {'true' if said else 'false'} does not apply to it (it caches by itself, without marks)"
        )
        return Caching(setting, "automatic", False, f"{model} caches automatically{note}")
    if said:
        return Caching(setting, "marks", True, "caching on: marks placed as ADR-0127 says")
    if said is False:  # said off (not left unset): no marks, so nothing is read back
        return Caching(setting, "off", False, "caching off in the policy: no marks placed, so no cache reads")
    if shows_caching(session):
        return Caching(
            setting,
            "marks",
            False,
            f"{AS_RECORDED_WORDS}: marks where the file's usage shows cache reads, modelled where ADR-0127 puts them",
        )
    return Caching(setting, "off", False, f"{AS_RECORDED_WORDS}: no marks, the file's usage shows no cache reads")


def map_words(caching: Caching) -> str:
    """The words short enough for the window map's line beside the request's size (at 1366 pixels the whole line
    would be dropped): the setting and what the file shows, without where the replay models the marks. The map draws
    the marks foldscope's compile places; left unset on a file that shows cache reads, the marks were the agent's,
    which the file does not hold ("no cache marks" beside "marks where the file's usage shows cache reads" read as a
    contradiction on such a file)."""
    if caching.setting == AS_RECORDED and caching.modelled == "marks" and not caching.placed:
        return f"{AS_RECORDED_WORDS}: the agent's own, which the file does not hold"
    return caching.words.split(", modelled where", 1)[0]


def unplaced_words(caching: Caching) -> str:
    """Why foldscope's compiled request carries no marks, in the setting's own words: the words alone when nothing is
    modelled either, else the words and that the compile places marks only with caching on."""
    if caching.modelled == "marks":
        return f"{caching.words}; the compiled request carries marks only with caching on"
    return caching.words
