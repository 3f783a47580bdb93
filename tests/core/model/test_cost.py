"""Tier pricing at, under and over a boundary, and writes priced per lifetime."""

import pytest

from foldscope.core.model.cost import ModelPrices, Tier, prices_from_mapping

# claude-haiku-5-5 as the pricing facts give it (USD per million tokens)
HAIKU = ModelPrices(
    "claude-haiku-5-5",
    (
        Tier(0, input=0.10, output=0.50, cache_read=0.01, cache_write_5m=0.125, cache_write_1h=0.20),
        Tier(100_000, input=0.50, output=2.50, cache_read=0.05, cache_write_5m=0.625, cache_write_1h=1.00),
    ),
)
GPT = prices_from_mapping(
    "gpt-5.6",
    {
        "tiers": [
            {"above": 0, "input": 5.0, "cache_read": 0.5, "output": 30.0},
            {"above": 272_000, "input": 10.0, "cache_read": 1.0, "output": 45.0},
        ]
    },
)


def test_under_and_at_the_boundary_is_the_first_tier():
    assert HAIKU.cost(fresh=100_000) == pytest.approx(0.01)
    assert HAIKU.cost(fresh=99_999, output=1_000_000) == pytest.approx(0.0099999 + 0.50)


def test_over_the_boundary_prices_the_whole_request_at_the_higher_tier():
    # 1 token over: every token of the request, and its output, at the second tier
    assert HAIKU.cost(fresh=100_001) == pytest.approx(100_001 * 0.50 / 1e6)
    assert HAIKU.cost(fresh=1, read=90_000, write_5m=10_000, output=1000) == pytest.approx(
        (1 * 0.50 + 90_000 * 0.05 + 10_000 * 0.625 + 1000 * 2.50) / 1e6
    )


def test_writes_are_priced_per_lifetime_and_reads_at_the_read_price():
    assert HAIKU.cost(fresh=0, read=10_000, write_5m=20_000, write_1h=30_000, output=0) == pytest.approx(
        (10_000 * 0.01 + 20_000 * 0.125 + 30_000 * 0.20) / 1e6
    )


def test_automatic_caching_prices_have_no_write_price_and_the_long_context_tier():
    assert GPT.cost(fresh=1000, read=100_000, output=100) == pytest.approx((5000 + 50_000 + 3000) / 1e6)
    assert GPT.cost(fresh=2001, read=270_000, output=100) == pytest.approx((2001 * 10 + 270_000 * 1.0 + 100 * 45) / 1e6)
    assert GPT.tiers[1].above == 272_000 and HAIKU.tier_for(100_000).above == 0


def test_region_multiplier_and_bad_tables():
    us = ModelPrices("h", HAIKU.tiers, multiplier=1.1)
    assert us.cost(fresh=100_000) == pytest.approx(0.011)
    with pytest.raises(ValueError):
        ModelPrices("x", (Tier(5, 1, 1),))
    with pytest.raises(ValueError):
        ModelPrices("x", ())
