"""`foldscope count FILE|-`: the o200k_base tokens of a text, importing only the counter (start-up is most of its time)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from foldscope.core.model.errors import ReadError
from foldscope.core.model.folders import is_folder  # not core.cli.options: it imports the policy (14 ms of a word's count)


def register(subparsers) -> None:
    count = subparsers.add_parser("count", help="o200k_base tokens of a text file, or stdin with -")
    count.add_argument("file", metavar="FILE|-", help="a text file (its UTF-8 text counted as it is), or - for stdin")
    count.add_argument("--json", action="store_true", help="print JSON")
    count.set_defaults(run=run_count, format=lambda r: str(r["tokens"]))


def run_count(args) -> dict[str, Any]:
    if args.file == "-":
        data, name = sys.stdin.buffer.read(), "<stdin>"
    else:
        if is_folder(args.file):  # said as every command says it, not as the OS's "Is a directory"
            raise ReadError(args.file, "", "is a folder, not a text file")
        try:
            data, name = Path(args.file).read_bytes(), args.file
        except OSError as exc:
            raise ReadError(args.file, "", f"cannot read the file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        from foldscope.core.formats import looks_like

        looks = looks_like(data[:4096])
        if looks is not None:
            raise ReadError(name, "", f"{looks}, not a text file") from None
        raise ReadError(name, f"byte {exc.start}", "not UTF-8 text") from None
    from foldscope.core.request.tokens import count_text  # a short text is counted without building an encoder

    return {"file": name, "tokens": count_text(text), "characters": len(text)}
