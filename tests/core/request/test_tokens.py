"""The vendored o200k_base tokenizer: exact counts, and its hash check."""

import hashlib
import os
import tempfile

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.request.tokens import count_text
from foldscope.core.request.vocabulary import TokenizerError, build_encoding, load_ranks, vocabulary_path


def _reference():
    """tiktoken's own o200k_base (its own pattern, its own hash check), fed from a private cache.

    tiktoken looks for sha1(url) in TIKTOKEN_CACHE_DIR before downloading; seeding that
    cache with the vendored file makes the reference exact and keeps the suite offline.
    """
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    cache = tempfile.mkdtemp(prefix="foldscope-tiktoken-")
    with open(os.path.join(cache, hashlib.sha1(url.encode()).hexdigest()), "wb") as out:
        out.write(vocabulary_path().read_bytes())
    previous = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = cache
    try:
        return tiktoken.get_encoding("o200k_base")
    finally:
        if previous is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = previous


REFERENCE = _reference()

# Fixed o200k_base counts (the published "hello world" = 2 and the pangram = 10 among them).
KNOWN = {
    "hello world": 2,
    "": 0,
    "The quick brown fox jumps over the lazy dog.": 10,
    "<|endoftext|>": 7,  # a special token's text counts as ordinary text
    "def load():\n    return {}\n": 6,
    "Größe 東京 🦜": 6,
}


@pytest.mark.parametrize("text, tokens", KNOWN.items())
def test_known_counts(text, tokens):
    assert count_text(text) == tokens


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_count_equals_tiktoken_on_random_unicode(text):
    # tiktoken's own encoding is built with its own expected-hash check from the same bytes.
    assert count_text(text) == len(REFERENCE.encode_ordinary(text))


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=200))
def test_tokens_decode_back_to_the_text(text):
    from foldscope.core.request.tokens import encoding

    assert encoding().decode(encoding().encode_ordinary(text)) == text


def test_a_corrupted_vocabulary_is_refused(tmp_path):
    data = bytearray(vocabulary_path().read_bytes())
    data[100] ^= 1
    broken = tmp_path / "o200k_base.tiktoken"
    broken.write_bytes(bytes(data))
    with pytest.raises(TokenizerError, match="hash mismatch"):
        build_encoding(broken)


def test_a_missing_vocabulary_is_a_clear_error(tmp_path):
    with pytest.raises(TokenizerError, match="cannot read"):
        load_ranks(tmp_path / "nope.tiktoken")


def test_tiktokens_version_is_read_as_tiktoken_says_it_without_importing_it():
    import subprocess
    import sys

    import tiktoken

    code = "import sys; from foldscope.core.request import vocabulary; print(vocabulary.tiktoken_version(), 'tiktoken' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == [tiktoken.__version__, "False"]


def test_a_cache_folder_under_a_file_costs_the_parse_not_a_traceback(tmp_path):
    """A cache folder that cannot be made (FOLDSCOPE_CACHE or XDG_CACHE_HOME below a file): removing the temporary
    file that was never written raised NotADirectoryError, which missing_ok does not cover, out of every command."""
    a_file = tmp_path / "a file"
    a_file.write_text("")
    ranks = load_ranks(vocabulary_path(), cache=a_file / "cache")
    assert len(ranks) > 100_000 and a_file.read_text() == ""
