"""Find the code points quicktok's Unicode table classes otherwise than tiktoken's pattern (core.request.unicode_gap).

Run: .venv/bin/python tools/quicktok_classes.py [--gap-only]
Counts every code point both ways, by quicktok with the classes this checkout uses (its own table less
unicode_gap.GAP) and by tiktoken, in three contexts each (letters upper and lower, digits, whitespace, marks and
punctuation about it), and prints the code points that differ as GAP's ranges (none is the proof). With
--gap-only quicktok counts with its own table unchanged, to show what the gap is for. About two minutes.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foldscope.core.request import quicktok_table, tokens, unicode_gap  # noqa: E402

PROBES = (
    "a{c}b A{c}B {c}1 x{c}{c}'s \n{c} {c}",
    "a{c}b A{c}B {c}1 x{c}{c}'s \n{c} {c}\t{c}{c}z 7{c} !{c}? {c}\n\n {c}",
    "{c}{c}{c} 12{c}3 {c}'S {c}a{c}Ab{c}\r\n{c}\r {c}  \u00e9{c}\u0301{c}{c}x",
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gap-only", action="store_true", help="count with quicktok's own table, the gap not taken out")
    args = ap.parse_args(argv)
    import quicktok

    folder = Path(tempfile.mkdtemp(prefix="foldscope-classes-"))
    try:
        for name in ("o200k.vocab", "o200k.special", "uniclass_o200k.bin"):
            shutil.copy(quicktok_table.fast_table() / name, folder / name)
        if args.gap_only:
            (folder / "uniclass_o200k.bin").write_bytes(quicktok_table.quicktok_classes() or b"")
        fast = quicktok.Tokenizer("o200k_base", str(folder))
        reference = tokens.reference_encoding()
        codes = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
        differ: set[int] = set()
        for start in range(0, len(codes), 4000):
            for probe in PROBES:
                texts = [probe.format(c=chr(c)) for c in codes[start : start + 4000]]
                theirs = [len(ids) for ids in reference.encode_ordinary_batch(texts, num_threads=1)]
                differ.update(c for c, text, n in zip(codes[start : start + 4000], texts, theirs) if fast.count(text) != n)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ranges: list[list[int]] = []
    for c in sorted(differ):
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    print(f"{len(differ)} code points count otherwise than tiktoken counts them, in {len(ranges)} ranges")
    for lo, hi in ranges:
        print(f"    (0x{lo:X}, 0x{hi:X}),")
    print(f"(unicode_gap.GAP holds {sum(hi - lo + 1 for lo, hi in unicode_gap.GAP)} code points)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
