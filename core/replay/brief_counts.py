"""A brief's prefixes counted from its whole count: a cut of a brief a little shorter counts what it leaves out, not the brief again."""

from __future__ import annotations

from foldscope.core.request.tokens import count_text

# Where a brief's text is cut into pieces whose counts add up: before each line that starts with "-" (its "- kind: ..."
# lines). o200k_base's pre-tokenizer never joins a newline to the "-" after it: the letter and number branches take no
# newline, the punctuation branch takes newlines only after its punctuation and "/" after them, and the whitespace
# branches take whitespace alone; and no branch looks behind, while the one that looks ahead (`\s+(?!\S)`) is tried
# after `\s*[\r\n]+`, which takes any whitespace that runs up to the newline. So the pre-tokens of a text are those of
# its pieces laid end to end, BPE merges only inside a pre-token, and a prefix counts the whole pieces before it plus
# what it holds of the next.
LINE_START = "\n-"


class BriefCounts:
    """The o200k_base count of any prefix of one text (`prefix(length)`, count_text(text[:length])) from its whole count:
    compaction's sized brief cuts its brief shorter until it fits, each cut a prefix of the brief a little shorter,
    and counting each cut whole counted most of the brief again. A prefix that ends past the last piece's start
    (LINE_START) counts the whole less that piece and the rest, plus what it holds of that piece."""

    __slots__ = ("text", "whole")

    def __init__(self, text: str) -> None:
        self.text = text
        self.whole = count_text(text)

    def prefix(self, length: int) -> int:
        """count_text(self.text[:length]), counting the shorter side of the last piece start before its end."""
        text = self.text
        if length >= len(text):
            return self.whole
        start = text.rfind(LINE_START, 0, length + 1) + 1  # the piece holding the prefix's end starts here (0: none)
        if not start or len(text) - start >= length:
            return count_text(text[:length])  # no piece start, or the rest past it is the longer: counted whole
        return self.whole - count_text(text[start:]) + count_text(text[start:length])
