"""What reading a Branch holds at its peak (issue 17's import memory): the file's text and its tree, not its bytes too."""

import json
import tracemalloc

from foldscope.core.formats.lionagi import parse_json


def test_a_branch_file_is_parsed_without_its_bytes_held(tmp_path):
    # One long string: the tree is as large as the text, so the peak is the text and the tree (2x the file) when
    # the bytes are let go before the parse, and 3x when they are held through it.
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"messages": {"collections": []}, "pad": "x" * 4_000_000}), encoding="utf-8")
    size = path.stat().st_size
    tracemalloc.start()
    try:
        top = parse_json(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(top["pad"]) == 4_000_000
    assert peak < 2.5 * size, f"peak {peak / size:.2f}x the file"
