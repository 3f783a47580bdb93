"""JSON from a file's bytes by msgspec's decoder, which gives what the json module gives wherever it accepts the text.

The readers parse every line (or a Branch's whole document) through `loads`, and only where msgspec refuses the
text does the json module's own path run, which accepts it or names the problem as the readers always did. msgspec
refuses more than the json module, never less (tests/core/formats/test_fast_json.py): NaN and Infinity, a lone
surrogate escape, a number beyond a float's range, a byte-order mark, bytes that are not UTF-8 all go the json
module's way. Where both accept, the values are equal and of the same types, ints of any size and floats bit for bit
included. On the bench's files it decodes in 0.3 to 0.45 of the json module's time (docs/performance.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from foldscope.core.model.session import ReadError

_decoder = msgspec.json.Decoder()
decode = _decoder.decode  # loads without the call around it, for a caller that catches REFUSALS itself
# ValidationError: a number msgspec cannot hold as a float (1e400), which the json module reads as inf.
REFUSALS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)

REFUSED = object()  # what loads gives where msgspec refuses the text: parse it with the json module

# The one depth limit for foldscope's own JSON: the native writer writes no document nested deeper, and every
# reader reads at least this deep (a document nested past what the interpreter's stack allows, about 990 levels,
# is refused with this limit named). So what foldscope writes, it reads back.
MAX_NESTING = 900
TOO_DEEP = f"JSON nested too deeply to read (foldscope reads and writes up to {MAX_NESTING} levels)"


def loads(data: bytes | bytearray | memoryview) -> Any:
    """The JSON value of `data`, or REFUSED where msgspec refuses it (the caller then asks the json module)."""
    try:
        return _decoder.decode(data)
    except REFUSALS:
        return REFUSED


def read_document(path: Path, max_bytes: int) -> Any:
    """A whole file as one JSON value (an agent's task or session file), or a ReadError in one line: over
    `max_bytes`, not UTF-8 (its byte), not JSON (its line and column), or nested past what is read."""
    if path.stat().st_size > max_bytes:
        raise ReadError(str(path), "", f"the file is over {max_bytes // 2**20} MB")
    try:
        return json.loads(path.read_bytes())
    except json.JSONDecodeError as exc:
        raise ReadError(str(path), f"line {exc.lineno} column {exc.colno}", "not JSON") from None
    except UnicodeDecodeError as exc:
        raise ReadError(str(path), f"byte {exc.start}", "not UTF-8 text") from None
    except RecursionError:
        raise ReadError(str(path), "", TOO_DEEP) from None
