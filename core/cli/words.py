"""Numbers and nouns in the CLI's text: every count with thousands separators, every noun agreeing with its count."""

from __future__ import annotations

# The CLI says a pass's outcome and agrees a noun with its count as the GUI does.
from foldscope.core.readout.words import OUTCOMES, noun, plural  # noqa: F401

# Every command's FILE, as its --help says it (README's FILE paragraph names each format).
FILE_HELP = "a session file, or a Cline, Roo Code or Kilo Code task folder, in any format foldscope reads (detected from its content)"


def num(value: int | float | None, absent: str = "-") -> str:
    """A count with thousands separators (200,000); a float keeps its own digits (1,234.5); None is `absent`."""
    if value is None:
        return absent
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,}"


# What each estimator decides on, in the user's words (the spec's names are in core.request.estimators and docs/cli.md).
DECIDES_ON = {
    "adr": "the estimate (foldscope's count of the request times the scale that keeps it at or above the provider's)",
    "predicted": "the predicted input (the newest reported input plus what was added since)",
}
