"""What a policy decides on: the ADR's estimate (count x scale, the spec's), or the predicted input.

ADR-0130 Amendment 1 gives the ceiling and the fold the **estimate**: the count (with the unseen head) times a
scale that only rises, a safety margin rather than a forecast. A replay may let the adr fold decide on the
**predicted input** instead (core.request.predict), so a user sees what a better estimator would have done:
before recorded request k, the predictor's rule for k (the newest trusted report of k's stretch plus the change
in count at the stretch's measured ratio, or with no anchor the count at the ratio plus the head) sizes any view
the fold tries, from reports before k only. The default stays the spec's.
"""

from __future__ import annotations

from collections.abc import Sequence

from foldscope.core.model.session import Message
from foldscope.core.request.measure import Measure
from foldscope.core.request.predict import Prediction
from foldscope.core.request.provider_text import PredictionCounter, prompt_renderer

ADR = "adr"
PREDICTED = "predicted"
# What each estimator decides on, in the user's words: screens show these; the spec behind each goes in a tooltip.
ESTIMATORS = {
    ADR: "the estimate: foldscope's count of the request times a scale that only rises, a safety margin",
    PREDICTED: "the predicted input: the newest reported input plus what was added since",
}
# Where each estimator's rule is written down, for a tooltip or the docs (never the label itself).
ESTIMATOR_SPECS = {
    ADR: "ADR-0130 Amendment 1's estimate, count x scale",
    PREDICTED: "core.request.predict's rule: the newest report of the stretch plus the change since",
}


def check_estimator(name: str) -> str:
    if name not in ESTIMATORS:
        raise ValueError(f"unknown estimator {name!r}; expected one of {', '.join(ESTIMATORS)}")
    return name


class PredictedSize:
    """The predicted input of any view at recorded request k, by the rule the predictor made for k.

    `at(k)` moves to request k (past the last recorded request: the next request's rule); calling it with a
    view and that view's compiled count (no unseen head: the rule's offset holds the head) sizes the view."""

    name = PREDICTED

    def __init__(self, measure: Measure) -> None:
        trace = measure.trace
        self.rules: list[Prediction | None] = [row.prediction for row in trace.rows]
        self.models = [row.model for row in trace.rows]
        self.following = trace.next_predicted
        self.counting = PredictionCounter(measure.session.format, render=prompt_renderer(measure.session))
        self.model = measure.model
        self.k = 0

    def at(self, k: int) -> None:
        self.k = k

    def rule(self) -> tuple[Prediction | None, str | None]:
        if self.k < len(self.rules):
            return self.rules[self.k], self.models[self.k]
        return self.following, self.model

    def __call__(self, messages: Sequence[Message], compiled: int) -> int:
        rule, model = self.rule()
        counted = self.counting.count(messages, compiled, model).total
        return counted if rule is None else rule.size(counted)
