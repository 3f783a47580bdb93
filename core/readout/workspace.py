"""The open session as the core owns it: a Document's facts, its command stack and revision, and the only ways to change them.

A GUI reads the Document (`workspace.document`) and changes it only here: `apply` a command, `undo`, `redo`,
`set_policy` (a command too: undone and redone like any other), `show_request` (step the shown view) and
`load_more` (a followed file read further). Each returns the Changes and, when anything changed, brings the
document's facts up to date (sizes, the next request, the rules, the fold rows) and moves its revisions, so a
panel keys what it keeps on a revision instead of recounting or comparing objects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from foldscope.core.actions.commands import CommandStack
from foldscope.core.fold.fold import Fold
from foldscope.core.model.commands import Changes, Command
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session
from foldscope.core.readout.agent_limits import context_window
from foldscope.core.readout.document import Document, Report, _no_report, next_revision
from foldscope.core.readout.fold_facts import fold_rows
from foldscope.core.readout.live import grow_document
from foldscope.core.readout.message_sizes import record_sizes
from foldscope.core.readout.trace_facts import Rules, rules_for
from foldscope.core.request.tokens import count_text
from foldscope.core.request.trace import build_trace


class Workspace:
    """One open, counted session: its Document (the facts panels read), its undo history and its revision."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.stack = CommandStack(document.session)
        # The policy the trace was measured under (at opening, or a followed file's growth) and its rules: putting that
        # policy back puts back what the measure said.
        self._opened: tuple[Policy | None, Rules | None] = (document.policy, document.rules)
        self._saved_records = len(document.session.record)  # the record's length as opened or last saved

    @property
    def session(self) -> Session:
        return self.document.session

    @property
    def revision(self) -> int:
        """The document's state: it moves at every change and at no other time."""
        return self.document.revision

    # -- the ways to change it ---------------------------------------------------------------

    def apply(self, command: Command, label: str | None = None) -> Changes:
        """Run one command (`label` names it on the undo stack: "restore of #42")."""
        if label:
            command.label = label
        return self._after(self.stack.do(command))

    def undo(self) -> Changes:
        changes = self.stack.undo()
        return self._after(changes) if changes is not None else Changes(success=False, message="nothing to undo")

    def redo(self) -> Changes:
        changes = self.stack.redo()
        return self._after(changes) if changes is not None else Changes(success=False, message="nothing to redo")

    def set_policy(self, policy: Policy) -> Changes:
        """Put `policy` in force (its rules, the next request's size under it): a command, undone like any other.
        A policy that differs from the one in force in no key changes nothing."""
        now = self.document.policy
        if now is not None and now.as_profile() == policy.as_profile():
            return Changes()
        return self.apply(SetPolicy(self, policy))

    def show_request(self, slot: int | None) -> Changes:
        """Show the active view as it stood at request `slot` (None or past the last: now)."""
        doc = self.document
        request = None if slot is None or slot >= len(doc.requests) else slot
        view = doc.session.view if request is None else list(doc.requests[request].view)
        if doc.shown == request and doc.view == view:
            return Changes()
        doc.show_view(view, at_request=request is not None, request=request)
        return self._moved(Changes(shown=True))

    def load_more(self, session: Session, report: Report = _no_report) -> Changes:
        """Show `session`, the same file read further (a followed file's growth): the record extends the document's.
        The history cannot step over what the file added, so it starts again here, clean."""
        doc = self.document
        ids, folds = set(doc.session.record.ids()), len(doc.folds)
        grow_document(doc, session, report)
        self.stack = CommandStack(session)
        self._opened = (doc.policy, doc.rules)
        self._saved_records = len(session.record)
        added = tuple(mid for mid in session.record.ids() if mid not in ids)
        changes = Changes(view=True, added=added, folds=len(doc.folds) - folds)
        return self._moved(changes)

    def admission(self, policy: Policy | None = None) -> Callable[[Sequence[str]], bool] | None:
        """The ceiling's admission check for a view under `policy` (default: the one in force): the fold's `fits`,
        which restore asks before a clipped original comes back whole; None without a ceiling (all admitted)."""
        doc = self.document
        measure = doc.measure_for(policy)
        if measure.ceiling is None:
            return None
        doc.session.scale = max(doc.session.scale, doc.scale)
        # The fold's own count (core.fold.fold.default_count) compiles as the next request would: bound, tools,
        # marks and an included first round's frozen bound.
        return Fold(doc.session, measure).fits

    # -- the saved state ---------------------------------------------------------------------

    @property
    def is_modified(self) -> bool:
        """The session differs from what was opened or last saved: the history stands elsewhere, or the record
        keeps messages an undone action appended (undo takes them out of the view, never out of the record)."""
        return not self.stack.is_clean or bool(self.kept_out_of_view())

    @property
    def session_modified(self) -> bool:
        """The session differs from what was opened or last saved, a policy put in force since aside (a what-if and
        following start from the session as saved, under the policy in force)."""
        since = self.stack.since_clean()
        return since is None or any(not isinstance(c, SetPolicy) for c in since) or bool(self.kept_out_of_view())

    def kept_out_of_view(self) -> list[int]:
        """Record indices appended since the session was opened or saved that the active view does not show."""
        record, view = self.session.record, set(self.session.view)
        return [i for i in range(self._saved_records, len(record)) if record[i].id not in view]

    def set_clean(self) -> None:
        """The session as it stands is saved."""
        self.stack.set_clean()
        self._saved_records = len(self.session.record)

    def reset_clean(self) -> None:
        """The session holds changes no save reached and no undo reaches (a recovered working state)."""
        self.stack.reset_clean()

    # -- keeping the facts current -----------------------------------------------------------

    def _after(self, changes: Changes) -> Changes:
        if changes.success and changes.changed:
            self._refresh(changes)
            return self._moved(changes)
        return changes

    def _moved(self, changes: Changes) -> Changes:
        doc = self.document
        doc.revision = next_revision()
        if not (changes.shown and not (changes.view or changes.added or changes.metadata or changes.folds or changes.policy)):
            doc.facts_revision = doc.revision
        if changes.policy:
            doc.trace_revision = doc.revision
        return changes

    def _refresh(self, changes: Changes) -> None:
        """Bring the document's per-message facts, the next request, the rules and the fold rows up to date."""
        doc = self.document
        session = doc.session
        record = session.record
        grew = len(record) > len(doc.tokens)  # an action appended messages (copies, notes)
        for index in range(len(doc.chars), len(record)):
            doc.chars.append(len(record[index].text))
        if grew and doc.counter is not None:
            # Sized as the full record compiled as one request carries them, as at load: an appended copy or note
            # may also change how others render (a second result for a call), so every size is taken again.
            sizes = record_sizes(doc.measure_for())
            doc.tokens[:], doc.record_count = sizes.tokens, sizes.total
        elif grew:
            doc.tokens.extend(count_text(record[i].text) for i in range(len(doc.tokens), len(record)))
        doc.show_view(session.view)
        # The window under the policy in force: every screen's.
        window = context_window(session, doc.policy)
        doc.context_window, doc.window_source = (window.tokens, window.said) if window else (None, "")
        if doc.counter is not None:  # the next request as the Measure in force sizes it, everywhere
            measure = doc.measure_for()
            messages = measure.messages(session.view)
            doc.now_size = measure.estimate(messages)
            doc.now_predicted = doc.predict_view(measure.count(messages))
        if changes.policy and doc.policy is not None:
            doc.rules = self._rules(doc.policy)
        if changes.folds:  # fold records were appended or taken back: their rows, with the requests they show at
            views = [r.view for r in doc.requests] + [tuple(session.view)]
            doc.folds = fold_rows(session, views, [r.at for r in build_trace(session)])

    def _rules(self, policy: Policy) -> Rules | None:
        """The rules of `policy` for this session: those opening made when it is the policy opening measured under."""
        opened, rules = self._opened
        if opened is not None and opened.as_profile() == policy.as_profile():
            return rules
        return rules_for(self.session, policy, self.document.measure_for(policy).resolution, named=True)

    def _put_policy(self, policy: Policy | None) -> Changes:
        self.document.policy = policy
        return Changes(policy=True)


class SetPolicy(Command):
    """Another policy in force on a workspace. Edits of the same keys in a row (typing a ceiling digit by digit)
    merge into one step; a step that ends where it began is dropped."""

    def __init__(self, workspace: Workspace, policy: Policy) -> None:
        super().__init__()
        self.workspace = workspace
        self.before, self.after = workspace.document.policy, policy
        self.label = "policy edit of " + ", ".join(self.keys()) if self.keys() else "policy edit"

    def keys(self) -> list[str]:
        """The keys this step changes."""
        return _edited(self.before, self.after)

    def do(self, session: Session) -> Changes:
        return self.workspace._put_policy(self.after)

    def undo(self, session: Session) -> Changes:
        return self.workspace._put_policy(self.before)

    def redo(self, session: Session) -> Changes:
        return self.workspace._put_policy(self.after)

    def merge(self, later: Command) -> bool:
        if not isinstance(later, SetPolicy) or later.workspace is not self.workspace:
            return False
        if not set(later.keys()) <= set(self.keys()):
            return False
        self.after = later.after
        return True

    @property
    def obsolete(self) -> bool:
        return not self.keys()


def _edited(before: Policy | None, after: Policy | None) -> list[str]:
    """The policy keys whose values differ."""
    a, b = (before or Policy()).as_profile(), (after or Policy()).as_profile()
    return [key for key in b if a.get(key) != b[key]]
