"""genai-prices' prices kept in the cache folder (core.model.pricing_cache): the same Priced as genai-prices' own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from foldscope.core.model import pricing, pricing_cache
from tests.core.model.test_pricing import corpus_sessions, request_models


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FOLDSCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(pricing, "_user_file", tmp_path / "none" / "prices.json")
    pricing_cache.forget()
    yield tmp_path / "cache"
    pricing_cache.forget()


def _uncached(model: str) -> pricing.Priced:
    """resolve's answer with genai-prices read directly (what it was before the cache)."""
    name = pricing.normalise(model)
    for candidate in dict.fromkeys((name, model.strip().lower().rsplit("/", 1)[-1])):
        found = pricing._genai_read(model, candidate, None)
        if found is not None:
            return found
    return pricing.Priced(model, reason=f"no price for model {model}")


def test_every_model_the_dev_corpus_names_is_priced_alike_from_the_cache_and_from_genai_prices(corpus_dev, cache):
    models = set()
    for session in corpus_sessions(corpus_dev):
        models |= request_models(session)
    models |= {"claude-sonnet-4-5", "gpt-5", "deepseek-chat", "no-such-model-anywhere"}
    from_genai = {m: _uncached(m) for m in models if pricing.find(m) is None}
    cold = {m: pricing.resolve(m) for m in from_genai}  # fills the file
    assert pricing_cache.cache_file() is not None and pricing_cache.cache_file().is_file()
    pricing_cache.forget()
    warm = {m: pricing.resolve(m) for m in from_genai}  # read back from the file
    assert any(p.source == "genai-prices" for p in from_genai.values())
    for model, theirs in from_genai.items():
        assert cold[model] == theirs, model
        assert warm[model] == theirs, model
        if theirs.prices is not None:
            assert cold[model].prices.tiers == warm[model].prices.tiers == theirs.prices.tiers, model


def test_a_warm_cache_prices_a_claude_model_without_importing_genai_prices(cache):
    code = (
        "import sys; from foldscope.core.model import pricing; p = pricing.resolve('claude-sonnet-4-5-20250929');"
        "print(p.source, p.prices.tiers[0].input, 'genai_prices' in sys.modules)"
    )
    env = {**os.environ, "FOLDSCOPE_CACHE": str(cache)}
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert first[:2] == second[:2] and first[0] == "genai-prices"
    assert first[2] == "True" and second[2] == "False"


def test_a_damaged_cache_or_one_made_from_another_genai_prices_is_made_again(cache):
    pricing.resolve("claude-sonnet-4-5")
    path = pricing_cache.cache_file()
    assert path is not None
    right = pricing_cache._read(path, pricing_cache.genai_key())
    assert right["claude-sonnet-4-5"]["tiers"]
    blob = path.read_bytes()
    path.write_bytes(blob.replace(b'"claude-sonnet-4-5"', b'"claude-sonnet-4-6"'))  # altered behind its digest
    assert pricing_cache._read(path, pricing_cache.genai_key()) == {}
    path.write_bytes(blob)
    assert pricing_cache._read(path, "0" * 64) == {}  # another genai-prices' data
    path.write_bytes(b"not a cache")
    pricing_cache.forget()
    assert pricing.resolve("claude-sonnet-4-5") == _uncached("claude-sonnet-4-5")
    assert pricing_cache._read(path, pricing_cache.genai_key())["claude-sonnet-4-5"]["tiers"]


def test_prices_that_change_with_the_date_or_the_hour_are_the_ones_genai_prices_gives_on_each_side_of_every_change(cache):
    from datetime import UTC, datetime, timedelta

    from genai_prices import data_snapshot

    moments: dict[str, list[datetime]] = {}
    for provider in data_snapshot.get_snapshot().providers:
        for info in provider.models:
            if not isinstance(info.prices, list):
                continue
            around = [datetime(2026, 6, 18, 8, 52, tzinfo=UTC)]
            for c in info.prices:
                if type(c.constraint).__name__ == "StartDateConstraint":
                    start = datetime.combine(c.constraint.start_date, datetime.min.time(), UTC)
                    around += [start + timedelta(hours=h) for h in (-1, 0, 12)]
                elif type(c.constraint).__name__ == "TimeOfDateConstraint":
                    for t in (c.constraint.start_time, c.constraint.end_time):
                        at = datetime.combine(datetime(2026, 6, 18).date(), t)
                        at = at.replace(tzinfo=UTC) if at.tzinfo is None else at
                        around += [at + timedelta(minutes=m) for m in (-1, 0, 1)]
            moments[info.id] = around
    assert "claude-opus-4-6" in moments and "deepseek-v4-flash" in moments
    checked = 0
    for name, around in moments.items():
        info = pricing._genai_model(name)
        if info is None or info.id != name or not isinstance(info.prices, list):
            continue  # another provider's model answers to this name first: not this one's case
        ours, theirs = pricing._genai_prices(name, name, None), pricing._genai_read(name, name, None)
        assert ours == theirs, name
        if theirs.prices is None:
            continue
        for moment in around:
            mine, genai = ours.prices.at(moment.timestamp()), theirs.prices.at(moment.timestamp())
            assert (mine.model, mine.tiers) == (genai.model, genai.tiers), (name, moment)
            checked += 1
    assert checked > 100
    kept = pricing_cache._read(pricing_cache.cache_file(), pricing_cache.genai_key())
    assert kept["claude-opus-4-6"]["conditions"] and kept["deepseek-v4-flash"]["conditions"]


def test_a_model_priced_by_the_hour_is_priced_from_the_cache_without_genai_prices(cache):
    code = (
        "import sys; from datetime import datetime, UTC; from foldscope.core.model import pricing;"
        "p = pricing.resolve('deepseek-v4-flash').prices;"
        "print(p.at(datetime(2026, 6, 18, 8, 52, tzinfo=UTC).timestamp()).tiers[0].input,"
        " p.at(datetime(2026, 6, 18, 20, 0, tzinfo=UTC).timestamp()).tiers[0].input, 'genai_prices' in sys.modules)"
    )
    env = {**os.environ, "FOLDSCOPE_CACHE": str(cache)}
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert first[:2] == second[:2] == ["0.3", "0.14"]  # peak hours, then the standard price (test_pricing's bill)
    assert (first[2], second[2]) == ("True", "False")


def test_a_kept_condition_holds_exactly_when_genai_prices_own_constraint_is_active():
    from datetime import UTC, date, datetime, time, timedelta, timezone

    from genai_prices.types import StartDateConstraint, TimeOfDateConstraint

    east = timezone(timedelta(hours=8))
    constraints = [
        TimeOfDateConstraint(start_time=time(16, 30), end_time=time(0, 30)),  # wraps midnight
        TimeOfDateConstraint(start_time=time(6, 0, tzinfo=UTC), end_time=time(10, 0, tzinfo=UTC)),
        TimeOfDateConstraint(start_time=time(1, 0, tzinfo=east), end_time=time(9, 0, tzinfo=east)),  # 17:00-01:00 UTC
        StartDateConstraint(start_date=date(2026, 3, 13)),
    ]
    start = datetime(2026, 3, 12, 0, 0, tzinfo=UTC)
    moments = [start + timedelta(minutes=10 * k) for k in range(6 * 48)] + [datetime(2026, 3, 13, 0, 30)]  # a naive one too
    for constraint in constraints:
        kept = pricing_cache.condition(constraint)
        for moment in moments:
            utc = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
            assert pricing_cache._holds(kept, utc) == constraint.active(moment), (constraint, moment)


def test_the_cache_is_made_again_when_genai_prices_finds_a_name_another_way(tmp_path, monkeypatch):
    """Which model a name is priced as is found in data_snapshot.py (find_provider_model): a genai-prices that changed
    only that finding must not read the entries another one made, so the key changes with each module entries come from."""
    import importlib.util
    from types import SimpleNamespace

    folder = tmp_path / "genai_prices"
    folder.mkdir()
    for name in ("__init__.py", "data.py", "types.py", "data_snapshot.py", "units.py"):
        (folder / name).write_text(f"# {name}\n")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: SimpleNamespace(origin=str(folder / "__init__.py")))
    keys = {pricing_cache.genai_key()}
    for name in ("data.py", "types.py", "data_snapshot.py"):
        (folder / name).write_text(f"# {name}, changed\n")
        keys.add(pricing_cache.genai_key())
    assert len(keys) == 4 and "" not in keys
    (folder / "units.py").write_text("# not read by the entries\n")
    assert pricing_cache.genai_key() in keys


def test_a_cache_folder_under_a_file_prices_from_genai_prices_without_a_traceback(tmp_path, monkeypatch):
    """The cache folder cannot be made (FOLDSCOPE_CACHE below a file): the model is priced all the same, and removing
    the temporary file that was never written (NotADirectoryError, not covered by missing_ok) stops nothing."""
    a_file = tmp_path / "a file"
    a_file.write_text("")
    monkeypatch.setenv("FOLDSCOPE_CACHE", str(a_file / "cache"))
    monkeypatch.setattr(pricing, "_user_file", tmp_path / "none" / "prices.json")
    pricing_cache.forget()
    try:
        assert pricing.resolve("claude-sonnet-4-5") == _uncached("claude-sonnet-4-5")
    finally:
        pricing_cache.forget()
    assert a_file.read_text() == ""


def test_the_digest_is_kept_with_the_modules_stamp_and_made_again_when_one_changes(tmp_path, monkeypatch):
    import importlib.util
    from types import SimpleNamespace

    monkeypatch.setenv("FOLDSCOPE_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "genai_prices"
    folder.mkdir()
    for name in ("__init__.py", "data.py", "types.py", "data_snapshot.py"):
        (folder / name).write_text(f"# {name}\n")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: SimpleNamespace(origin=str(folder / "__init__.py")))
    first = pricing_cache.genai_key()
    read = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self.name) or real(self))
    assert pricing_cache.genai_key() == first and read == []  # kept: no module read, none hashed
    (folder / "data.py").write_text("# data.py\n")  # the same bytes written again: its changed time differs
    assert pricing_cache.genai_key() == first and "data.py" in read
    (tmp_path / "cache" / "prices-key.stamp").write_text("damaged", encoding="ascii")
    read.clear()
    assert pricing_cache.genai_key() == first and "data.py" in read
