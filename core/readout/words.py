"""Words for counts and times as a person reads them: "1 message", "2 messages", a timestamp as a date."""

from __future__ import annotations

from datetime import UTC, datetime

from foldscope.core.model.money_text import under_a_hundredth_of_a_cent  # re-exported: the screens ask it here

# Nouns whose plural is not the singular plus "s".
_IRREGULAR = {"body": "bodies", "copy": "copies", "summary": "summaries"}


def dollars(usd: float | None) -> str:
    """Dollars with the digits a small bill needs: $0.0007, not $0.00 (`sessions`, `usage` and the agent sessions
    dialog); under a hundredth of a cent "<$0.0001"; from a dollar, cents; a negative sum signed before the $."""
    if usd is None:
        return "-"
    tiny = under_a_hundredth_of_a_cent(usd)
    if tiny is not None:
        return tiny
    sign = "-" if usd < 0 else ""
    return f"{sign}${abs(usd):,.4f}" if abs(usd) < 1 else f"{sign}${abs(usd):,.2f}"


def plural(n: int, noun: str, many: str | None = None) -> str:
    """`n noun` agreeing in number, with separators: "1 compaction", "3 compactions", "1,204 requests"."""
    if n == 1:
        return f"1 {noun}"
    return f"{n:,} {many or _IRREGULAR.get(noun) or noun + 's'}"


def noun(n: int, word: str, many: str | None = None) -> str:
    """The noun alone, agreeing with n: for a sentence that puts the count elsewhere."""
    return word if n == 1 else (many or _IRREGULAR.get(word) or word + "s")


def when(value: object) -> object:
    """A message's `created_at` as a person reads it: epoch seconds become a UTC date and time; other values stay."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    try:
        moment = datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return value
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def counted_words(count: int, unseen_head: int = 0) -> str:
    """A request's count as every screen words it: foldscope's own count of what the file holds, then the unseen
    head apart (estimated from reported input, never folded into "counted")."""
    return f"{count:,} counted" + (f" + an unseen head of {unseen_head:,}" if unseen_head else "")


def sizes_words(count: int, unseen_head: int, estimate: int, scale: float, predicted: int | None, near: str = "") -> str:
    """A request's three sizes as the composition's screens say them, each by its DESIGN name so none reads as
    another: its count (what the composition splits, the unseen head apart), its estimate and its predicted input
    (`near`: "~" where it is made from an agent's approximate usage, as every screen marks it)."""
    said = f"count {count + unseen_head:,} tokens ({counted_words(count, unseen_head)}), estimate {estimate:,} (× scale {scale:.3f})"
    return said + (f", predicted input {near}{predicted:,}" if predicted else "")


def scaled_words(count: int, unseen_head: int, scale: float) -> str:
    """How an estimate is made, as the screens word it: "(C counted + an unseen head of H) × scale S"."""
    said = counted_words(count, unseen_head)
    return f"{f'({said})' if unseen_head else said} × scale {scale:.3f}"


# A fold pass's outcome as the fold records it, and as every screen says it (the CLI's fold, the GUI's fold preview), in
# DESIGN's words: a pass lands only when it strictly lowers the estimate, else it is rolled back (core.fold.fold).
OUTCOMES = {"landed": "landed", "rolled_back": "rolled back (it did not lower the estimate)"}
