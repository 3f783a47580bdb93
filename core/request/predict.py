"""Predicted input: the best forecast of what the provider will report for a request, from what was known before it.

A request is predicted from the newest trusted report of its **stretch** (the requests between a compaction,
a model change or a head change): that report, plus what changed since (the difference of our counts),
converted at the stretch's measured tokens per count (the least-squares slope of its trusted reports against
their counts). A request with no anchor (the first of a session or stretch) is its count at the best known
ratio plus the best head estimate known (what the newest anchored report held beyond its count).

A report that disagrees wildly with its own prediction is **flagged** and not trusted until the next report
confirms it (the jump was real: the next report agrees with it better than with the older anchor). So one
corrupt figure moves at most the request after it, and no figure moves the stretch's ratio unless trusted.

Nothing here looks ahead: `Predictor.predict(k)` reads only reports fed before it, so no report after request k
moves request k's prediction. Pure functions over per-request counts, reports, models and stretches.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

# A report further than this from its anchored prediction is flagged (p90 error is about 1%: 25% is wild).
WILD_ANCHORED = 0.25
MIN_SPAN = 2_000  # counted tokens a stretch's trusted reports must span before their slope is trusted
RATIO_RANGE = (0.5, 2.0)  # tokens per count outside this is no tokenizer: fall back to the prior


@dataclass(frozen=True)
class Sent:
    """One request as the predictor sees it: our count of what it carried, its model and its stretch."""

    count: int
    model: str | None = None
    stretch: int = 0


def rule_size(count: int, anchor: int | None, ratio: float, head: int, anchor_count: int, anchor_reported: int) -> int:
    """Prediction.size from a prediction's fields (after `count`, in their order): the anchor's report plus the change
    in count at the ratio, or with no anchor the count at the ratio plus the head."""
    if anchor is not None:
        return max(0, round(anchor_reported + (count - anchor_count) * ratio))
    return max(0, round(count * ratio + head))


@dataclass(frozen=True)
class Prediction:
    """The forecast for one request: the size, what it was anchored on, and the ratio and head it used."""

    predicted: int
    anchor: int | None  # the request whose report it was anchored on; None: no anchor (count plus head)
    ratio: float  # tokens the provider counts per token we count, in this stretch
    head: int  # for an unanchored prediction, the head estimate added; else 0
    anchor_count: int = 0  # the anchor's count and report: what `size` carries the change from
    anchor_reported: int = 0

    def size(self, count: int) -> int:
        """The rule this prediction made, applied to any count known before the same send (a fold's candidate
        view): the anchor's report plus the change in count at the ratio, or with no anchor the count at the
        ratio plus the head. `size(the request's own count)` is `predicted`."""
        return rule_size(count, self.anchor, self.ratio, self.head, self.anchor_count, self.anchor_reported)

    @property
    def predicted_from(self) -> int | str:
        """What `foldscope requests` prints: the anchor's index, or `count` when there was none."""
        return self.anchor if self.anchor is not None else "count"


@dataclass
class _Stretch:
    """The trusted reports of one stretch, with the running sums of their least-squares fit."""

    id: int
    model: str | None
    points: list[tuple[int, int, int]] = field(default_factory=list)  # (request, count, reported), trusted
    n: int = 0
    sc: float = 0.0
    sr: float = 0.0
    scc: float = 0.0
    scr: float = 0.0
    low: int | None = None
    high: int | None = None

    def add(self, k: int, count: int, reported: int) -> None:
        self.points.append((k, count, reported))
        self.n += 1
        self.sc += count
        self.sr += reported
        self.scc += count * count
        self.scr += count * reported
        self.low = count if self.low is None else min(self.low, count)
        self.high = count if self.high is None else max(self.high, count)

    def slope(self) -> float | None:
        """Tokens per count from the trusted reports, once they span MIN_SPAN counted tokens."""
        if self.n < 2 or self.low is None or self.high is None or self.high - self.low < MIN_SPAN:
            return None
        den = self.n * self.scc - self.sc * self.sc
        if den <= 0:
            return None
        value = (self.n * self.scr - self.sc * self.sr) / den
        return value if RATIO_RANGE[0] <= value <= RATIO_RANGE[1] else None


class Predictor:
    """Predicts requests in order; `report` feeds each request's reported input once it is known."""

    def __init__(self, head: int = 0) -> None:
        self._stretch: _Stretch | None = None
        self._ratios: dict[str | None, float] = {}  # the last measured ratio per model: a new stretch's prior
        self._ratio = 1.0  # the last measured ratio of any model
        # What the newest anchored report held beyond its count at its ratio; before any report, the head the
        # caller knows from elsewhere (core.request.head_priors: other sessions of the same agent), never this session's.
        self._head = head
        self.measured = False  # whether a report of this session has measured the head yet
        self._pending: tuple[int, Sent, int, Prediction] | None = None  # a flagged report awaiting confirmation
        self._last: tuple[int, Sent, Prediction] | None = None  # the request predicted last, awaiting its report
        self.flagged: list[int] = []  # requests whose reports stayed untrusted

    def _ratio_for(self, stretch: _Stretch, model: str | None) -> float:
        measured = stretch.slope()
        if measured is not None:
            return measured
        return self._ratios.get(model, self._ratio)

    def _enter(self, sent: Sent) -> _Stretch:
        s = self._stretch
        if s is None or s.id != sent.stretch or s.model != sent.model:
            if s is not None and self._pending is not None:
                self.flagged.append(self._pending[0])
            self._pending = None
            s = self._stretch = _Stretch(sent.stretch, sent.model)
        return s

    def predict(self, k: int, sent: Sent) -> Prediction:
        """Request k's prediction from the reports fed so far (never any later one)."""
        s = self._enter(sent)
        ratio = self._ratio_for(s, sent.model)
        if s.points:
            a, count, reported = s.points[-1]
            rule: tuple[int | None, float, int, int, int] = (a, ratio, 0, count, reported)
        else:
            rule = (None, ratio, self._head, 0, 0)
        # One Prediction made from the rule's fields, not a rule made and then replaced (dataclasses.replace: 11,384
        # of them at 50,000 messages, 0.03-0.08 s of the window's path to its counted timeline).
        p = Prediction(rule_size(sent.count, *rule), *rule)
        self._last = (k, sent, p)
        return p

    def _from(self, point: tuple[int, int, int], sent: Sent, ratio: float) -> float:
        return point[2] + (sent.count - point[1]) * ratio

    def report(self, k: int, reported: int | None) -> bool:
        """Feed request k's reported input (None or 0: not reported); True when the report is flagged."""
        if self._last is None or self._last[0] != k:
            raise ValueError(f"report for request {k} before its prediction")
        _, sent, p = self._last
        if not reported:
            return False
        s = self._enter(sent)
        expected = float(p.predicted)
        pending = self._pending
        if pending is not None:
            j, jsent, jreported, _ = pending
            via = self._from((j, jsent.count, jreported), sent, p.ratio)
            if abs(reported - via) < abs(reported - expected):
                s.add(j, jsent.count, jreported)  # the jump was real: the next report agrees with it
                expected = via
            else:
                self.flagged.append(j)
            self._pending = None
        # A stretch's first report has no neighbour to disagree with (an unanchored prediction only guesses the
        # head): it is trusted, and a corrupt one is caught by the next report instead.
        off = abs(reported / expected - 1) if expected > 0 else float("inf")
        wild = bool(s.points) and off > WILD_ANCHORED
        if wild:
            self._pending = (k, sent, reported, p)
            return True
        s.add(k, sent.count, reported)
        ratio = self._ratio_for(s, sent.model)
        measured = s.slope()
        if measured is not None:
            self._ratios[sent.model] = self._ratio = measured
        self._head = max(0, round(reported - sent.count * ratio))
        self.measured = True
        return False

    def copy(self) -> Predictor:
        """An independent copy of the state (what copy.deepcopy gives, without walking every point's tuple)."""
        twin = copy.copy(self)
        twin._ratios, twin.flagged = dict(self._ratios), list(self.flagged)
        if self._stretch is not None:
            twin._stretch = copy.copy(self._stretch)
            twin._stretch.points = list(self._stretch.points)
        return twin

    def __eq__(self, other: object) -> bool:
        """The same state (the same reports fed in the same order): a session grown step by step predicts as the whole."""
        return isinstance(other, Predictor) and vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]  # mutable: equal by state, never a key

    def flagged_now(self) -> list[int]:
        """Every request whose report is untrusted now: the ones that stayed so, and one still awaiting the next."""
        return self.flagged + ([self._pending[0]] if self._pending is not None else [])


def predict_all(sent: Sequence[Sent], reported: Sequence[int | None]) -> tuple[list[Prediction], list[bool]]:
    """Every request's prediction, each made before its own report was fed, and whether each report was
    flagged (as known when the next request was predicted: a later confirmation does not unflag it here)."""
    predictor = Predictor()
    out: list[Prediction] = []
    flags: list[bool] = []
    for k, (s, r) in enumerate(zip(sent, reported)):
        out.append(predictor.predict(k, s))
        flags.append(predictor.report(k, r))
    return out, flags


def predict_next(sent: Sequence[Sent], reported: Sequence[int | None], following: Sent) -> Prediction:
    """The next request's prediction, after every recorded one."""
    predictor = Predictor()
    for k, (s, r) in enumerate(zip(sent, reported)):
        predictor.predict(k, s)
        predictor.report(k, r)
    return predictor.predict(len(sent), following)


def trivial(sent: Sequence[Sent], reported: Sequence[int | None]) -> list[int | None]:
    """The baseline any predictor must beat: the previous request's reported/counted ratio times this count."""
    out: list[int | None] = [None]
    for k in range(1, len(sent)):
        prev, count = reported[k - 1], sent[k - 1].count
        out.append(round(sent[k].count * prev / count) if prev and count else None)
    return out[: len(sent)]
