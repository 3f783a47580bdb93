"""genai-prices' prices of the models a user's sessions name, kept in the cache folder so that pricing them does not
import genai-prices (its pydantic models cost about 0.18 s of CPU, most of `replay DIR --strategy recorded`'s own).

The file is derived from the installed package only: its name and contents carry the SHA-256 of genai-prices' data,
types and data_snapshot modules (what the prices, their reading and the finding of a name's model come from) and this
module's FORMAT, and its payload sits behind its own SHA-256; a file that does not verify, or was made from another
genai-prices, is ignored and made again. Each model is asked of genai-prices the first time it is priced and kept: its
id, context window and tiers (USD per million tokens as the floats core.model.pricing makes of them), None where
genai-prices does not know the name, and where its prices change with the date or the time of day a request is
sent, each price with its condition (a start date, or a daily interval in UTC), chosen as genai-prices chooses
(tiers_at).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from datetime import UTC, date, datetime, time
from functools import lru_cache
from pathlib import Path
from typing import Any

from foldscope.core.model.cost import ModelPrices, Tier

FORMAT = 2  # raised when what an entry holds, or how core.model.pricing reads genai-prices, changes
# genai-prices' modules the entries are made from: the prices, their types, and the finding of a name's model
_SOURCES = ("data.py", "types.py", "data_snapshot.py")

_MISSING = object()
_entries: dict[str, Any] | None = None  # this process's view of the file: name -> entry (None: unknown to genai-prices)
_key: str | None = None  # the installed genai-prices' digest, or "" where it cannot be found (no cache then)


def entry(name: str, make: Callable[[str], dict[str, Any] | None]) -> dict[str, Any] | None:
    """The kept entry for a model name, else make(name)'s (asking genai-prices), kept for the next process."""
    entries = _load()
    found = entries.get(name, _MISSING)
    if found is not _MISSING:
        return found
    made = entries[name] = make(name)
    if _key:
        _write(_file(_key), entries)
    return made


def forget() -> None:
    """Let go of this process's view of the file (tests; the next entry reads it again)."""
    global _entries, _key
    _entries, _key = None, None


def genai_key() -> str:
    """The installed genai-prices' digest (its modules in _SOURCES), found without importing it; "" if none."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("genai_prices")
    except (ImportError, ValueError):
        return ""
    if spec is None or spec.origin is None:
        return ""
    folder = Path(spec.origin).parent
    stamp = _stamp([folder / name for name in _SOURCES])
    kept = _kept_key(stamp)
    if kept is not None:
        return kept
    digest = hashlib.sha256(f"format {FORMAT}\n".encode())
    try:
        for name in _SOURCES:
            digest.update(hashlib.sha256((folder / name).read_bytes()).digest())
    except OSError:
        return ""
    key = digest.hexdigest()
    if stamp is not None:
        _keep_key(stamp, key)
    return key


# The digest is kept beside the entries with the modules' stamp (core.model.file_stamp): hashing data.py (1.6 MB) was
# about 5 ms of every priced command's start; a module changed since gets a new stamp and is hashed again.
def _stamp(paths: list[Path]) -> str | None:
    from foldscope.core.model import file_stamp

    stamp = file_stamp.of_paths(paths)
    return None if stamp is None else f"{stamp} format {FORMAT}"


def _stamp_file() -> Path:
    from foldscope.core.model.folders import cache_folder

    return cache_folder() / "prices-key.stamp"


def _kept_key(stamp: str | None) -> str | None:
    from foldscope.core.model import file_stamp

    kept = file_stamp.read(_stamp_file()) if stamp is not None else None
    if kept is None:
        return None
    kept_stamp, _, key = kept.partition("\n")
    return key if kept_stamp == stamp and len(key) == 64 else None


def _keep_key(stamp: str, key: str) -> None:
    from foldscope.core.model import file_stamp

    file_stamp.write(_stamp_file(), f"{stamp}\n{key}")


def cache_file() -> Path | None:
    """Where the entries of the installed genai-prices are kept (None where it cannot be found)."""
    key = genai_key()
    return _file(key) if key else None


def _file(key: str) -> Path:
    from foldscope.core.model.folders import cache_folder

    return cache_folder() / f"prices-{key[:16]}.json"


def _load() -> dict[str, Any]:
    global _entries, _key
    if _entries is None:
        _key = genai_key()
        _entries = _read(_file(_key), _key) if _key else {}
    return _entries


def _read(path: Path, key: str) -> dict[str, Any]:
    """The file's entries, or none when it is missing, damaged or made from another genai-prices."""
    try:
        blob = path.read_bytes()
    except OSError:
        return {}
    digest, payload = blob[:64], blob[65:]
    if blob[64:65] != b"\n" or hashlib.sha256(payload).hexdigest().encode() != digest:
        return {}
    try:
        data = json.loads(payload)
    except ValueError:
        return {}
    if not isinstance(data, dict) or data.get("genai_prices") != key or not isinstance(data.get("models"), dict):
        return {}
    return data["models"]


def _write(path: Path, entries: dict[str, Any]) -> None:
    payload = json.dumps({"genai_prices": _key, "models": entries}, sort_keys=True).encode()
    blob = hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        from foldscope.core.model.folders import make_private_folder

        make_private_folder(path.parent)
        temporary.write_bytes(blob)
        os.replace(temporary, path)  # whole or not at all; two processes writing at once: the last one's stands
    except OSError:  # a read-only cache folder: the next process asks genai-prices again
        with contextlib.suppress(OSError):  # a cache folder under a file: no temporary to remove, NotADirectoryError
            temporary.unlink()


# -- prices that change with the date or the time of day ----------------------------------------------------------
def condition(constraint: Any) -> str | None:
    """A genai-prices price's constraint as kept: None (always), `date YYYY-MM-DD` (from that UTC day on) or
    `daily START END` (seconds after midnight UTC, the interval wrapping midnight when END < START)."""
    if constraint is None:
        return None
    if type(constraint).__name__ == "StartDateConstraint":
        return f"date {constraint.start_date.isoformat()}"
    if type(constraint).__name__ == "TimeOfDateConstraint":
        return f"daily {_utc_seconds(constraint.start_time)!r} {_utc_seconds(constraint.end_time)!r}"
    raise ValueError(f"genai-prices constraint not known here: {type(constraint).__name__}")


def _utc_seconds(value: time) -> float:
    """A time of day (naive: UTC) as seconds after midnight UTC, as genai-prices compares them."""
    if value.tzinfo is not None:
        value = datetime.combine(date(1970, 1, 1), value).astimezone(UTC).timetz()
    return value.hour * 3600 + value.minute * 60 + value.second + value.microsecond / 1e6


def _holds(kept: str | None, moment: datetime) -> bool:
    if kept is None:
        return True
    kind, *values = kept.split()
    if kind == "date":
        return moment.date().isoformat() >= values[0]
    start, end = (float(v) for v in values)
    now = _utc_seconds(moment.timetz().replace(tzinfo=None))
    return (now >= start or now < end) if end < start else start <= now < end


def _chosen(conditions: list, moment: datetime) -> int:
    """genai-prices' choice (ModelInfo.get_prices): the last price whose condition holds, else the first."""
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    for i in range(len(conditions) - 1, -1, -1):
        if _holds(conditions[i][0], moment):
            return i
    return 0


def tiers_at(conditions: list, moment: datetime) -> list | None:
    """The kept tiers in force at `moment` (None: that price lists no token prices)."""
    return conditions[_chosen(conditions, moment)][1]


def in_force(key: str, conditions: str, when: float) -> ModelPrices | None:
    """The kept prices of model `key` (its conditions as JSON) in force at `when` (seconds since the epoch, UTC), as
    core.model.pricing reads genai-prices' own; None for an impossible time or a price with no token prices."""
    try:
        moment = datetime.fromtimestamp(when, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return _prices(key, conditions, _chosen(_parsed(conditions), moment))


@lru_cache(maxsize=64)
def _parsed(conditions: str) -> list:
    return json.loads(conditions)


@lru_cache(maxsize=256)
def _prices(key: str, conditions: str, chosen: int) -> ModelPrices | None:
    """One price of a kept model as ModelPrices (kept: a long session is priced once a request)."""
    from functools import partial

    tiers = _parsed(conditions)[chosen][1]
    return None if tiers is None else ModelPrices(key, tuple(Tier(*tier) for tier in tiers), timed=partial(in_force, key, conditions))
