"""The pricing table (resources/pricing.json): tiered prices per model, and each model's first tier boundary."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

# A dated snapshot suffix such as -20250929 names the same prices as the model it snapshots.
_SNAPSHOT = re.compile(r"-(\d{8}|latest)$")


@dataclass(frozen=True)
class PriceEntry:
    """One model's row of the table, as it stands in the file."""

    model: str
    data: Mapping[str, Any]

    @property
    def tiers(self) -> list[Mapping[str, Any]]:
        return sorted(self.data.get("tiers", []), key=lambda t: t.get("above", 0))

    @property
    def first_boundary(self) -> int | None:
        """The first price-tier boundary: the prompt size past which the next tier prices the whole request."""
        tiers = self.tiers
        return int(tiers[1]["above"]) if len(tiers) > 1 else None

    @property
    def priced(self) -> bool:
        """Whether the table knows its input and output prices (some flat models carry only multipliers)."""
        return all(t.get("input") is not None and t.get("output") is not None for t in self.tiers)


@lru_cache(maxsize=1)
def table() -> Mapping[str, Any]:
    """The whole table, read once through importlib.resources."""
    text = resources.files("foldscope.resources").joinpath("pricing.json").read_text(encoding="utf-8")
    return json.loads(text)


def normalise(model: str) -> str:
    """`anthropic/claude-haiku-5-5`, `Claude-Haiku-5-5-20261012` and `claude-haiku-5-5` name one row."""
    name = model.strip().lower()
    if "/" in name:
        name = name.rsplit("/", 1)[1]
    return _SNAPSHOT.sub("", name)


def find(model: str | None) -> PriceEntry | None:
    """The table's row for a model name (provider prefix, snapshot suffix and aliases allowed), or None."""
    if not model:
        return None
    models = table()["models"]
    name = normalise(model)
    if name in models:
        return PriceEntry(name, models[name])
    for key, data in models.items():
        if name in data.get("aliases", ()):
            return PriceEntry(key, data)
    return None


def first_boundary(model: str | None) -> int | None:
    entry = find(model)
    return entry.first_boundary if entry else None


def model_prices(model: str | None, region: str | None = None) -> dict[str, Any] | None:
    """The model's tiers as core.model.cost reads them ({"tiers": [...], "multiplier": r}); None when not priced."""
    entry = find(model)
    if entry is None or not entry.priced:
        return None
    multiplier = float(entry.data.get("regions", {}).get(region, 1.0)) if region else 1.0
    return {"tiers": [dict(t) for t in entry.tiers], "multiplier": multiplier}


def capacity(model: str | None) -> Mapping[str, int] | None:
    entry = find(model)
    return entry.data.get("capacity") if entry else None
