"""Prices per model from three sources, in order: the user's overrides, the project's table, genai-prices.

The project's table (resources/pricing.json) holds the spec's own models, priced as the spec prices them.
Every real model comes from the `genai-prices` package's shipped data (never its network refresh: this
module reads only the snapshot the installed package carries). A user's `prices.json` in the config folder,
or a file named by `--prices`, overrides both. A model none of them knows is named in one line, never "n/a".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from foldscope.core.model.cost import ModelPrices, Tier, prices_from_mapping
from foldscope.core.model.session import ReadError
from foldscope.resources import read_text

# A dated snapshot suffix such as -20250929 names the same prices as the model it snapshots.
_SNAPSHOT = re.compile(r"-(\d{8}|latest)$")
# Bedrock and Vertex names: `jp.anthropic.claude-haiku-4-5-20251001-v1:0`, `anthropic.claude-...`.
_REGION_PREFIX = re.compile(r"^(?:(?:[a-z]{2}|global|apac)\.)?(?:anthropic|openai|google|google_genai|meta|amazon|mistral)\.")
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")
NO_MODEL = frozenset({"", "<synthetic>"})  # Claude Code's `<synthetic>` marks a message no model wrote
SOURCES = ("user", "table", "genai-prices")
USER_FILE = "prices.json"


@dataclass(frozen=True)
class PriceEntry:
    """One model's row of the project's table, as it stands in the file."""

    model: str
    data: Mapping[str, Any]

    @property
    def tiers(self) -> list[Mapping[str, Any]]:
        tiers = self.data.get("tiers") or [self.data]  # a flat row may hold its prices at the top
        return sorted(tiers, key=lambda t: t.get("above", 0))

    @property
    def first_boundary(self) -> int | None:
        """The first price-tier boundary: the prompt size past which the next tier prices the whole request."""
        tiers = self.tiers
        return int(tiers[1]["above"]) if len(tiers) > 1 else None

    @property
    def priced(self) -> bool:
        """Whether the table knows its input and output prices (some flat models carry only multipliers)."""
        return all(t.get("input") is not None and t.get("output") is not None for t in self.tiers)


@dataclass(frozen=True)
class Priced:
    """A model's prices and where they came from (`source`), or why there are none (`reason`)."""

    model: str | None  # the name asked for
    name: str | None = None  # the row or model id that matched
    prices: ModelPrices | None = None
    source: str | None = None  # user, table or genai-prices; None when no source prices it
    reason: str | None = None
    first_boundary: int | None = None
    context_window: int | None = None
    known: bool = False  # a source knows the model (a flat spec model may be known and unpriced)

    @property
    def priced(self) -> bool:
        return self.prices is not None


@lru_cache(maxsize=1)
def table() -> Mapping[str, Any]:
    """The project's table, read once (foldscope.resources.read_text)."""
    text = read_text("pricing.json")
    return json.loads(text)


def is_model(model: str | None) -> bool:
    """Whether a name names a model (`<synthetic>` and blanks do not)."""
    return model is not None and model.strip().lower() not in NO_MODEL


def normalise(model: str) -> str:
    """`anthropic/claude-haiku-5-5`, `converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0` and
    `Claude-Haiku-5-5-20261012` name the rows `claude-haiku-5-5` and `claude-haiku-4-5`."""
    name = model.strip().lower()
    if "/" in name:
        name = name.rsplit("/", 1)[1]
    name = _REGION_PREFIX.sub("", name)
    name = _BEDROCK_VERSION.sub("", name)
    return _SNAPSHOT.sub("", name)


def find(model: str | None) -> PriceEntry | None:
    """The project table's row for a model name (provider prefix, snapshot suffix and aliases allowed), or None."""
    if not is_model(model):
        return None
    assert model is not None
    return _find_in(table()["models"], normalise(model))


def _find_in(models: Mapping[str, Any], name: str) -> PriceEntry | None:
    if name in models:
        return PriceEntry(name, models[name])
    for key, data in models.items():
        if name in data.get("aliases", ()):
            return PriceEntry(key, data)
    return None


# -- the user's overrides -------------------------------------------------------------------------
_user_file: Path | None = None  # set by --prices; else the config folder's prices.json


def user_file() -> Path:
    """Where the user's overrides live: `--prices FILE`, else prices.json in the config folder."""
    if _user_file is not None:
        return _user_file
    from foldscope.core.model.folders import linux_folder

    linux = linux_folder("XDG_CONFIG_HOME", "~/.config")  # platformdirs' own folder there, without its import
    if linux is not None:
        return linux / USER_FILE
    import platformdirs

    return Path(platformdirs.user_config_dir("foldscope")) / USER_FILE


def use_prices_file(path: str | Path | None) -> None:
    """Read overrides from `path` from now on (None: the config folder again); a bad file is one clear line."""
    global _user_file
    _user_file = Path(path) if path is not None else None
    if path is not None:
        try:
            if not Path(path).is_file():
                raise ReadError(str(path), "", "no such prices file")
            _read_user.cache_clear()
            user_models()
        except ReadError:
            _user_file = None  # a refused file is not left in use for what runs next in this process
            raise


def user_models() -> Mapping[str, Any]:
    """The user's rows, in the table's shape ({"models": {name: {"tiers": [...]}}} or the models at the top)."""
    return _read_user(user_file())


@lru_cache(maxsize=4)
def _read_user(path: Path) -> Mapping[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReadError(str(path), "", f"not a readable prices file ({exc})") from None
    except RecursionError:
        raise ReadError(str(path), "", "not a prices file: nested too deeply to read") from None
    models = data.get("models", data) if isinstance(data, dict) else None
    if not isinstance(models, dict):
        raise ReadError(str(path), "", "a prices file is a JSON object of models")
    out: dict[str, Any] = {}
    for name, row in models.items():
        if name == "about":
            continue
        if not isinstance(row, dict):
            raise ReadError(str(path), name, "a model's prices are an object with tiers or input and output")
        try:
            prices_from_mapping(name, row)
        except (KeyError, TypeError, ValueError) as exc:
            raise ReadError(str(path), name, f"not a price row: {exc}") from None
        out[normalise(name)] = row
    return out


# -- genai-prices ---------------------------------------------------------------------------------
_GENAI_KEYS = {
    "input": "input_mtok",
    "output": "output_mtok",
    "cache_read": "cache_read_mtok",
    "cache_write_5m": "cache_write_mtok",
    "cache_write_1h": "cache_write_1h_mtok",
}


@lru_cache(maxsize=256)
def _genai_model(name: str) -> Any:
    """genai-prices' model for a name, from the data the installed package ships (None when unknown)."""
    from genai_prices import data_snapshot

    # get_snapshot() returns the bundled data unless someone called genai-prices' updater, which we never do.
    snapshot = data_snapshot.get_snapshot()
    try:
        return snapshot.find_provider_model(name, None, None, None)[1]
    except LookupError:
        return None


def priced_at(now: datetime | None = None) -> datetime:
    """When a price is read with no request's time (a request's own is read by ModelPrices.at): noon UTC of the day
    it is priced. Some of genai-prices' models are priced by the time of day (DeepSeek's off-peak discount, 16:30 to
    00:30 UTC), and reading them at the clock's own time made one file's cost change with the hour foldscope ran;
    noon UTC is their standard hours. The day is kept, so a price that changed on a date is the one in force."""
    now = now or datetime.now(tz=UTC)
    return now.astimezone(UTC).replace(hour=12, minute=0, second=0, microsecond=0)


def _genai_prices(model: str, name: str, at: datetime | None) -> Priced | None:
    """genai-prices' prices of a model, from the cache of them (core.model.pricing_cache): importing genai-prices costs
    more than a small session's whole replay."""
    from foldscope.core.model import pricing_cache

    kept = pricing_cache.entry(name, _genai_entry)
    if kept is None:
        return None
    if kept.get("read"):
        return _genai_read(model, name, at)
    key, window, conditions = kept["id"], kept["window"], kept.get("conditions")
    tiers = kept["tiers"] if conditions is None else pricing_cache.tiers_at(conditions, at or priced_at())
    if tiers is None:
        return Priced(
            model, key, None, None, f"no price for model {model}: genai-prices lists no token prices", context_window=window, known=True
        )
    timed = None if conditions is None else partial(pricing_cache.in_force, key, json.dumps(conditions))
    prices = ModelPrices(key, tuple(Tier(*tier) for tier in tiers), timed=timed)
    return Priced(model, key, prices, "genai-prices", None, tiers[1][0] if len(tiers) > 1 else None, window, True)


def _genai_entry(name: str) -> dict[str, Any] | None:
    """What the cache keeps of genai-prices' model `name` (core.model.pricing_cache): None when it does not know it;
    its tiers, or its prices with the condition each holds under where they change with the date or time of day."""
    from foldscope.core.model import pricing_cache

    info = _genai_model(name)
    if info is None:
        return None
    window = info.context_window if isinstance(info.context_window, int) else None
    if not isinstance(info.prices, list):
        return {"id": info.id, "window": window, "tiers": _tier_rows(_genai_tiers(info, info.prices, name))}
    try:
        conditions = [[pricing_cache.condition(c.constraint), _tier_rows(_genai_tiers(info, c.prices, name))] for c in info.prices]
    except ValueError:  # a condition this version does not know: read from genai-prices each time
        return {"read": True}
    return {"id": info.id, "window": window, "conditions": conditions}


def _tier_rows(prices: ModelPrices | None) -> list | None:
    if prices is None:
        return None
    return [[t.above, t.input, t.output, t.cache_read, t.cache_write_5m, t.cache_write_1h] for t in prices.tiers]


def _genai_read(model: str, name: str, at: datetime | None) -> Priced | None:
    """genai-prices' prices of a model, read from genai-prices itself (imported here)."""
    info = _genai_model(name)
    if info is None:
        return None
    window = info.context_window if isinstance(info.context_window, int) else None
    prices = _genai_tiers(info, info.get_prices(at or priced_at()), name)
    if prices is None:
        return Priced(
            model, info.id, None, None, f"no price for model {model}: genai-prices lists no token prices", context_window=window, known=True
        )
    bounds = [t.above for t in prices.tiers]
    return Priced(model, info.id, prices, "genai-prices", None, bounds[1] if len(bounds) > 1 else None, window, True)


def _genai_tiers(info: Any, price: Any, name: str) -> ModelPrices | None:
    """One of genai-prices' prices as our tiers, None when it lists no token prices. A model whose prices are a list
    of conditions (a time of day, a date) keeps its name, so each request is priced as in force when it was sent."""
    values = {ours: getattr(price, theirs, None) for ours, theirs in _GENAI_KEYS.items()}
    if values["input"] is None or values["output"] is None:
        return None
    bounds = sorted({0, *(t.start for v in values.values() if v is not None and hasattr(v, "tiers") for t in v.tiers)})
    tiers = tuple(Tier(b, **{k: _at(v, b) for k, v in values.items()}) for b in bounds)  # type: ignore[arg-type]
    return ModelPrices(info.id, tiers, timed=partial(_in_force, name) if isinstance(info.prices, list) else None)


# Prices in force, by model name and the genai-prices price object chosen (the data's own objects live as long as
# the process): a long session is priced per request without building its tiers again each time.
_IN_FORCE: dict[tuple[str, int], ModelPrices | None] = {}


def _in_force(name: str, when: float) -> ModelPrices | None:
    """genai-prices' prices for model `name` at the moment `when` (seconds since the epoch, UTC): the hour and the
    date a request was sent decide its price (DeepSeek's peak hours, a price that changed on a date). None when
    no calendar holds that moment or it lists no token prices (ModelPrices.at then keeps the prices it has)."""
    info = _genai_model(name)
    if info is None:
        return None
    try:
        moment = datetime.fromtimestamp(when, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    price = info.get_prices(moment)
    key = (name, id(price))
    if key not in _IN_FORCE:
        _IN_FORCE[key] = _genai_tiers(info, price, name)
    return _IN_FORCE[key]


def _at(value: Any, above: int) -> float | None:
    """A genai-prices price (a Decimal, or tiered: a base and tiers by start) for prompts past `above`."""
    if value is None:
        return None
    if isinstance(value, Decimal):
        return float(value)
    chosen = value.base
    for tier in value.tiers:
        if above >= tier.start:
            chosen = tier.price
    return float(chosen)


# -- the three together -----------------------------------------------------------------------------
def _from_row(model: str, entry: PriceEntry, source: str, region: str | None) -> Priced:
    window = (entry.data.get("capacity") or {}).get("input")
    if not entry.priced:
        return Priced(
            model,
            entry.model,
            None,
            None,
            f"no price for model {model}: the {source} table lists it without input and output prices",
            entry.first_boundary,
            window,
            True,
        )
    multiplier = float(entry.data.get("regions", {}).get(region, 1.0)) if region else 1.0
    prices = prices_from_mapping(entry.model, {"tiers": [dict(t) for t in entry.tiers]}, multiplier)
    return Priced(model, entry.model, prices, source, None, entry.first_boundary, window, True)


def resolve(model: str | None, region: str | None = None, at: datetime | None = None) -> Priced:
    """The model's prices: the user's overrides, then the project's table, then genai-prices."""
    if not is_model(model):
        return Priced(model, reason="no model named, so no price" if not model else f"{model} is no model, so no price")
    assert model is not None
    name = normalise(model)
    user = _find_in(user_models(), name)
    if user is not None:
        return _from_row(model, user, "user", region)
    row = find(model)
    if row is not None:
        return _from_row(model, row, "table", region)
    for candidate in dict.fromkeys((name, model.strip().lower().rsplit("/", 1)[-1])):
        found = _genai_prices(model, candidate, at)
        if found is not None:
            return found
    return Priced(model, reason=f"no price for model {model}")


def first_boundary(model: str | None) -> int | None:
    """The model's first price-tier boundary, from whichever source prices it."""
    return resolve(model).first_boundary


def model_prices(model: str | None, region: str | None = None) -> dict[str, Any] | None:
    """The table's tiers for a model as core.model.cost reads them ({"tiers": [...], "multiplier": r}); None when not priced."""
    entry = find(model)
    if entry is None or not entry.priced:
        return None
    multiplier = float(entry.data.get("regions", {}).get(region, 1.0)) if region else 1.0
    return {"tiers": [dict(t) for t in entry.tiers], "multiplier": multiplier}


def capacity(model: str | None) -> Mapping[str, int] | None:
    entry = find(model)
    return entry.data.get("capacity") if entry else None


def lookup_prices(model: str | None, region: str | None = None) -> ModelPrices | None:
    """The model's prices from the user's overrides, the project's table or genai-prices, or None."""
    return resolve(model, region).prices
