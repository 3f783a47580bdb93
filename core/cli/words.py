"""Numbers and nouns in the CLI's text: every count with thousands separators, every noun agreeing with its count."""

from __future__ import annotations

from foldscope.core.readout.words import OUTCOMES  # noqa: F401  (the CLI says a pass's outcome as the GUI does)

# Nouns whose plural is not the singular plus "s".
_IRREGULAR = {"body": "bodies", "copy": "copies", "summary": "summaries"}


def num(value: int | float | None, absent: str = "-") -> str:
    """A count with thousands separators (200,000); a float keeps its own digits (1,234.5); None is `absent`."""
    if value is None:
        return absent
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,}"


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`n noun` agreeing in number, with separators: "1 compaction", "3 compactions", "1,204 requests"."""
    if n == 1:
        return f"1 {noun}"
    return f"{n:,} {many or _IRREGULAR.get(noun) or noun + 's'}"


def noun(n: int, word: str, many: str | None = None) -> str:
    """The noun alone, agreeing with n: for a sentence that puts the count elsewhere."""
    return word if n == 1 else (many or _IRREGULAR.get(word) or word + "s")


# What each estimator decides on, in the user's words (the spec's names are in core.request.estimators and docs/cli.md).
DECIDES_ON = {
    "adr": "the estimate (foldscope's count of the request times the scale that keeps it at or above the provider's)",
    "predicted": "the predicted input (the newest reported input plus what was added since)",
}
