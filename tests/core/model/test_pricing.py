"""Prices for every real model: the user's overrides, then the project's table, then genai-prices' shipped data."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from foldscope.core.formats import load_session
from foldscope.core.model import pricing
from foldscope.core.model.policy import Policy, resolve_ceiling
from foldscope.core.model.session import ReadError, Session


def corpus_sessions(root: Path) -> list[Session]:
    out = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.name.startswith("run_manifest"):
            out.append(load_session(str(path)))
    return out


def request_models(session: Session) -> set[str]:
    return {m for m in {r.model for r in session.trace} | {session.model} if pricing.is_model(m)}


@pytest.fixture(autouse=True)
def _no_user_prices(tmp_path, monkeypatch):
    """Every test starts without the user's own prices.json (a developer's machine may have one)."""
    monkeypatch.setattr(pricing, "_user_file", tmp_path / "none" / "prices.json")


def test_every_model_that_made_a_request_in_the_dev_corpus_has_a_price(corpus_dev):
    models = set()
    for session in corpus_sessions(corpus_dev):
        models |= request_models(session)
    assert "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0" in models  # the prefix case is in the corpus
    unpriced = {m: pricing.resolve(m).reason for m in models if not pricing.resolve(m).priced}
    assert not unpriced
    assert len(models) >= 10


def test_provider_prefixes_and_snapshots_name_the_model_they_wrap():
    assert pricing.normalise("converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0") == "claude-haiku-4-5"
    assert pricing.normalise("anthropic.claude-opus-4-5-20251101-v1:0") == "claude-opus-4-5"
    assert pricing.normalise("Anthropic/Claude-Haiku-5-5-20261012") == "claude-haiku-5-5"
    found = pricing.resolve("converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0")
    assert (found.source, found.name) == ("genai-prices", "claude-haiku-4-5")


def test_synthetic_is_no_model_and_a_fake_model_gets_one_line_no_price():
    assert not pricing.is_model("<synthetic>")
    assert pricing.resolve("<synthetic>").prices is None
    fake = pricing.resolve("claude-nonesuch-9-9")
    assert fake.prices is None and fake.source is None
    assert fake.reason == "no price for model claude-nonesuch-9-9"
    r = resolve_ceiling(Policy(max_input_tokens="auto"), "claude-nonesuch-9-9")
    assert r.ceiling is None and "no price for model claude-nonesuch-9-9" in r.why


def test_the_specs_models_are_priced_by_the_project_table_as_the_spec_prices_them():
    haiku = pricing.resolve("claude-haiku-5-5")
    assert haiku.source == "table" and haiku.first_boundary == 100_000
    assert haiku.prices is not None and haiku.prices.tiers[1].input == 0.50
    assert pricing.resolve("gpt-5.6").source == "table"
    flat = pricing.resolve("claude-opus-5-5")
    assert flat.known and flat.prices is None and "no price for model claude-opus-5-5" in (flat.reason or "")


def test_auto_resolves_to_the_first_prompt_tier_of_whichever_source_prices_the_model():
    assert resolve_ceiling(Policy(max_input_tokens="auto"), "claude-sonnet-4-5-20250929").ceiling == 200_000  # genai-prices
    assert resolve_ceiling(Policy(max_input_tokens="auto"), "gpt-5.5").ceiling == 272_000  # genai-prices
    assert resolve_ceiling(Policy(max_input_tokens="auto"), "claude-haiku-5-5").ceiling == 100_000  # table
    assert resolve_ceiling(Policy(max_input_tokens="auto"), "claude-opus-4-5").ceiling is None  # one flat tier


def test_genai_prices_tiers_price_the_whole_request_past_the_boundary():
    sonnet = pricing.resolve("claude-sonnet-4-5").prices
    assert sonnet is not None
    assert sonnet.cost(fresh=200_000) == pytest.approx(200_000 * 3.0 / 1e6)
    assert sonnet.cost(fresh=1, read=200_000, output=1000) == pytest.approx((6.0 + 200_000 * 0.6 + 1000 * 22.5) / 1e6)
    assert sonnet.cost(fresh=0, write_5m=1000, write_1h=1000) == pytest.approx((1000 * 3.75 + 1000 * 6.0) / 1e6)
    codex = pricing.resolve("gpt-5.3-codex")
    assert codex.prices is not None and codex.context_window == 400_000
    assert codex.prices.tiers[0].cache_write_5m is None  # automatic caching: no write price


def test_precedence_is_the_users_overrides_then_the_project_table_then_genai_prices(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps(
            {
                "models": {
                    "claude-opus-4-5": {"tiers": [{"above": 0, "input": 1.0, "output": 2.0}]},
                    "claude-haiku-5-5": {"input": 7.0, "output": 8.0},
                }
            }
        ),
        encoding="utf-8",
    )
    assert pricing.resolve("claude-opus-4-5").source == "genai-prices"
    pricing.use_prices_file(path)
    try:
        opus = pricing.resolve("claude-opus-4-5-20251101")
        assert opus.source == "user" and opus.prices is not None and opus.prices.tiers[0].input == 1.0
        assert pricing.resolve("claude-haiku-5-5").source == "user"
        assert pricing.resolve("gpt-5.6").source == "table"
    finally:
        pricing.use_prices_file(None)


def test_the_config_folders_prices_json_is_read(tmp_path, monkeypatch):
    import platformdirs

    monkeypatch.setattr(pricing, "_user_file", None)
    monkeypatch.setattr(platformdirs, "user_config_dir", lambda name: str(tmp_path / name))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # where Linux's is found without platformdirs (core.model.folders)
    (tmp_path / "foldscope").mkdir()
    (tmp_path / "foldscope" / "prices.json").write_text('{"gpt-5.5": {"input": 1, "output": 1}}', encoding="utf-8")
    assert pricing.resolve("gpt-5.5").source == "user"


@pytest.mark.parametrize(
    "text,problem",
    [
        ("{not json", "not a readable prices file"),
        ('["a"]', "a JSON object of models"),
        ('{"m": {"input": "x", "output": 1}}', "not a price row"),
    ],
)
def test_a_bad_prices_file_is_one_clear_line_naming_it(tmp_path, text, problem):
    path = tmp_path / "prices.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ReadError, match=problem) as caught:
        pricing.use_prices_file(path)
    assert str(path) in str(caught.value)
    pricing.use_prices_file(None)


def test_with_sockets_blocked_loading_prices_and_pricing_every_corpus_session_works(corpus_dev, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("pricing tried the network")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    pricing._genai_model.cache_clear()
    priced = 0
    for session in corpus_sessions(corpus_dev):
        for request in session.trace:
            found = pricing.resolve(request.model or session.model)
            if request.usage is not None and found.prices is not None:
                u = request.usage
                assert found.prices.cost(u.input, u.cache_read, u.cache_write - u.cache_write_1h, u.cache_write_1h, u.output) >= 0
                priced += 1
    assert priced > 500


def test_a_price_read_without_a_time_is_the_same_at_any_hour_foldscope_runs(monkeypatch):
    # DeepSeek's genai-prices entry halves its prices from 16:30 to 00:30 UTC: read at the clock's own time, one
    # file's cost changed with the hour it was priced. Without a request time, noon UTC of the day is read.
    from datetime import UTC, datetime

    from foldscope.core.model import pricing

    seen = {}
    for hour in (3, 12, 20, 23):

        class Clock(datetime):
            at = datetime(2026, 12, 1, hour, 45, tzinfo=UTC)

            @classmethod
            def now(cls, tz=None):
                return cls.at

        monkeypatch.setattr(pricing, "datetime", Clock)
        found = pricing.resolve("deepseek-chat")
        assert found.source == "genai-prices" and found.prices is not None
        seen[hour] = found.prices.tiers[0].input
    assert len(set(seen.values())) == 1, seen
    assert seen[20] == pytest.approx(0.27)  # the standard hours' input price, per million tokens


DEEPSEEK_EXCERPT = "pi/earendil-works-pi_personal-assistant_session-sample.EXCERPT.jsonl"


def _sent_at(source: Path, out: Path, hour: int) -> Path:
    """The file with every timestamp moved to `hour` UTC of its own day (a test's copy in tmp_path)."""
    import re

    text = source.read_text(encoding="utf-8")
    text = re.sub(r'("timestamp":")(\d{4}-\d\d-\d\d)T\d\d', lambda m: f"{m[1]}{m[2]}T{hour:02d}", text)
    out.write_text(text, encoding="utf-8")
    return out


def _genai_bill(session: Session) -> float:
    """genai-prices' own price for the session's one request, at the time the file says it was sent."""
    from datetime import UTC, datetime

    import genai_prices

    (request,) = session.trace
    u = request.usage
    assert u is not None and request.at is not None
    usage = genai_prices.Usage(
        input_tokens=u.input + u.cache_read + u.cache_write,
        cache_read_tokens=u.cache_read,
        cache_write_tokens=u.cache_write,
        output_tokens=u.output,
    )
    found = genai_prices.calc_price(
        usage, model_ref=request.model or "", provider_id="deepseek", genai_request_timestamp=datetime.fromtimestamp(request.at, tz=UTC)
    )
    return float(found.total_price)


def test_each_request_is_priced_as_in_force_when_it_was_sent_on_every_screen(corpus_dev, tmp_path):
    # The dev corpus's DeepSeek request was sent on 2026-06-18 at 08:52 UTC, in deepseek-v4-flash's peak hours
    # (06:00 to 10:00 UTC) and before its prices changed in August and September. Priced at noon UTC of the day
    # foldscope ran, it showed half of that. Every figure that prices a recorded request reads its own time: the
    # recorded replay's rows, the untokenised summary, the session's totals and the cache report's bill.
    from foldscope.core.forensics.cache_report import cache_report
    from foldscope.core.model.launch import session_policy
    from foldscope.core.model.session_totals import totals_of
    from foldscope.core.replay.billed import billed_summary
    from foldscope.core.replay.lab import run_strategy
    from foldscope.core.request.measure import Measure

    bills = {}
    for hour in (8, 20):  # peak hours, then the standard price of the same day
        session = load_session(_sent_at(corpus_dev / DEEPSEEK_EXCERPT, tmp_path / f"at{hour}.jsonl", hour))
        assert session.model == "deepseek-v4-flash"
        policy = session_policy(session)
        theirs = _genai_bill(session)
        replayed = run_strategy(session, "recorded", Measure(session, policy))
        summary = billed_summary(session, policy)
        assert summary is not None
        report = cache_report(session, policy)
        ours = {
            "replay": replayed.rows[0].cost_usd,
            "summary": summary["totals"][0]["cost_usd"],
            "totals": totals_of(session.trace, session.model).cost_usd,
            "cache report": report.rows[0].priced.bill_usd,
        }
        for screen, usd in ours.items():
            assert usd == pytest.approx(theirs, abs=1e-6), (hour, screen, usd, theirs)
        bills[hour] = theirs
    # By hand, USD per million: 770 fresh, 172,288 read, 269 out at 0.30, 0.006 and 1.20 (peak), 0.14, 0.0028 and 0.28.
    assert bills[8] == pytest.approx((770 * 0.30 + 172288 * 0.006 + 269 * 1.20) / 1e6)
    assert bills[20] == pytest.approx((770 * 0.14 + 172288 * 0.0028 + 269 * 0.28) / 1e6)


def test_a_price_that_never_changes_is_the_same_at_any_time_and_an_impossible_time_keeps_the_standard_price():
    from foldscope.core.model.cost import ModelPrices, Tier

    fixed = ModelPrices("m", (Tier(0, 1.0, 2.0),))
    assert fixed.at(0.0) is fixed and fixed.at(None) is fixed
    timed = pricing.resolve("deepseek-v4-flash").prices
    assert timed is not None and timed.timed is not None
    assert timed.at(1e300) is timed and timed.at(None) is timed  # no calendar holds that moment
    assert timed.at(1781772736.352).tiers[0].input == pytest.approx(0.30)  # 2026-06-18 08:52 UTC, peak hours
