"""quicktok counts as tiktoken counts, from tables built from the vendored vocabulary; tiktoken where it is missing."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.request import quicktok_table, tokens, unicode_gap
from foldscope.core.request.count import Counter
from foldscope.core.request.quicktok_table import FAST_SPECIAL_SHA256, FAST_TABLE_SHA256, fast_tables
from foldscope.core.request.vocabulary import TokenizerError, load_ranks, vocabulary_path

fast_only = pytest.mark.skipif(tokens.BACKEND != tokens.FAST, reason=f"counted by tiktoken here: {tokens.WHY_SLOW}")


def reference_count(text: str) -> int:
    return len(tokens.reference_encoding().encode_ordinary(text))


def strings(value):
    """Every string a JSON value holds, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def corpus_texts(folder) -> list[str]:
    """Each dev corpus file whole, each of its lines, and every string its JSON holds."""
    texts: list[str] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        whole = path.read_text(encoding="utf-8", errors="surrogateescape")
        texts.append(whole)
        for line in whole.splitlines():
            texts.append(line)
            try:
                texts.extend(strings(json.loads(line)))
            except ValueError:
                pass
        if path.suffix == ".json":
            try:
                texts.extend(strings(json.loads(whole)))
            except ValueError:
                pass
    return texts


@fast_only
def test_quicktok_counts_every_dev_corpus_text_as_tiktoken_counts_it(corpus_dev):
    texts = corpus_texts(corpus_dev)
    assert len(texts) > 1000
    fast = tokens._local()
    differ = [text[:80] for text in texts if fast.count(text) != reference_count(text)]
    assert not differ, differ[:5]


@fast_only
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_quicktok_counts_and_encodes_random_unicode_as_tiktoken(text):
    fast = tokens._local()
    ids = tokens.reference_encoding().encode_ordinary(text)
    assert fast.encode_ordinary(text) == ids
    assert fast.count(text) == len(ids)


@fast_only
def test_every_code_point_of_the_unicode_gap_counts_as_tiktoken_counts_it():
    """The code points new in Unicode 17 (core.request.unicode_gap): unassigned to tiktoken, so to us."""
    fast = tokens._local()
    differ = []
    for lo, hi in unicode_gap.GAP:
        for code in range(lo, hi + 1):
            c = chr(code)
            text = f"a{c}b A{c}B {c}1 x{c}{c}'s \n{c} {c}"
            if fast.count(text) != reference_count(text):
                differ.append(hex(code))
    assert not differ, differ[:10]


def test_the_gap_is_taken_out_of_every_class_and_only_it():
    table = b"".join(
        [
            (2).to_bytes(4, "little") + b"".join(n.to_bytes(4, "little") for n in (0x41, 0x5A, 0x88A, 0x892)),
            *[(0).to_bytes(4, "little")] * 4,
        ]
    )
    ours = unicode_gap.classes_without_gap(table, gap=((0x88F, 0x88F), (0x891, 0x899)))
    assert ours[:4] == (3).to_bytes(4, "little")
    assert [int.from_bytes(ours[4 + 4 * i : 8 + 4 * i], "little") for i in range(6)] == [0x41, 0x5A, 0x88A, 0x88E, 0x890, 0x890]


@fast_only
def test_the_table_known_by_its_hash_at_import_is_the_one_ours_is_made_from():
    # tokens chooses quicktok at import by the hash of its class table alone (start-up); ours is made from it later.
    table = quicktok_table.quicktok_classes()
    assert table is not None and unicode_gap.known_table(table)
    ours = unicode_gap.our_classes(table)
    assert ours is not None and hashlib.sha256(ours).hexdigest() == unicode_gap.CLASSES_SHA256
    assert not unicode_gap.known_table(table[:-8]) and unicode_gap.our_classes(table[:-8]) is None


@fast_only
def test_a_surrogate_counts_as_tiktoken_counts_it():
    for text in ("x\ud800y", "\udfff", "a\ud83d\ude00b"):
        assert tokens.count_text(text) == reference_count(text)
        assert tokens.encoding().encode_ordinary(text) == tokens.reference_encoding().encode_ordinary(text)


@fast_only
def test_a_batch_counts_each_text_as_counted_alone_surrogates_and_long_pieces_among_them():
    # count_batch gives short texts to quicktok straight: a lone surrogate among them, or a text long enough to hold a
    # long piece, must still count as tiktoken counts it.
    fast = tokens._local()
    batches = (["a b", "x\ud800y", "plain"], ["short", "q" * 70_000 + " end"], ["one", "two words"], [])
    for texts in batches:
        assert fast.count_batch(texts) == [reference_count(text) for text in texts]
        assert Counter()._count_all(texts) == [reference_count(text) for text in texts]


def test_quicktoks_table_is_built_from_the_vendored_vocabulary():
    vocab, special = fast_tables(load_ranks(vocabulary_path()))
    assert hashlib.sha256(vocab).hexdigest() == FAST_TABLE_SHA256
    assert hashlib.sha256(special).hexdigest() == FAST_SPECIAL_SHA256


@fast_only
def test_a_damaged_cached_table_is_built_again(tmp_path):
    folder = quicktok_table.fast_table(cache=tmp_path)
    vocab = folder / "o200k.vocab"
    data = bytearray(vocab.read_bytes())
    data[40] ^= 1  # one token's bytes changed: it would count otherwise
    vocab.write_bytes(bytes(data))
    assert quicktok_table.fast_table(cache=tmp_path) == folder
    assert hashlib.sha256(vocab.read_bytes()).hexdigest() == FAST_TABLE_SHA256


@fast_only
def test_a_corrupted_vocabulary_is_refused_by_quicktoks_path_too(tmp_path):
    data = bytearray(vocabulary_path().read_bytes())
    data[100] ^= 1
    broken = tmp_path / "o200k_base.tiktoken"
    broken.write_bytes(bytes(data))
    with pytest.raises(TokenizerError, match="hash mismatch"):
        tokens.build_fast(broken)


def _chosen(*prelude: str, env: dict | None = None) -> list[str]:
    """The log line a fresh interpreter writes when it imports the tokenizer, and its counts of a few texts."""
    code = "; ".join(
        [
            *prelude,
            "import logging",
            "logging.basicConfig(level=logging.INFO, format='%(message)s')",
            "from foldscope.core.request import tokens",
            "print(tokens.BACKEND, [tokens.count_text(t) for t in ('hello world', 'a\\u1acfb', 'x' * 70000)])",
        ]
    )
    import os

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, **(env or {})})
    # the first line: the choice at import (a line saying the encoder was built after the small path may follow)
    return [done.stderr.strip().splitlines()[0], done.stdout.strip()]


def test_the_counter_is_chosen_at_import_with_a_log_line_and_without_quicktok_counts_the_same():
    expected = [tokens.count_text("hello world"), tokens.count_text("a\u1acfb"), tokens.count_text("x" * 70000)]
    log, out = _chosen("import sys", "sys.modules['quicktok'] = None")  # as where no wheel installed it
    assert log == "o200k_base counted by tiktoken: quicktok is not installed (no wheel for this platform?)"
    assert out == f"tiktoken {expected}"
    log, out = _chosen(env={"FOLDSCOPE_TOKENIZER": "tiktoken"})
    assert out == f"tiktoken {expected}"
    if tokens.quicktok is not None:
        assert log == "o200k_base counted by tiktoken: FOLDSCOPE_TOKENIZER=tiktoken"
        log, out = _chosen(env={"FOLDSCOPE_TOKENIZER": ""})
        assert log == f"o200k_base counted by quicktok {tokens.quicktok.__version__}"
        assert out == f"quicktok {expected}"
