"""The ceiling policy: ADR-0130 D1/D2 resolution and Amendment 3's validation of every key."""

from __future__ import annotations

import math

import pytest

from foldscope.core.model import pricing
from foldscope.core.model.policy import Policy, PolicyError, resolve_ceiling


def test_pricing_table_has_the_specs_tiers():
    assert pricing.first_boundary("claude-haiku-5-5") == 100_000
    assert pricing.first_boundary("anthropic/claude-haiku-5-5") == 100_000
    assert pricing.first_boundary("gpt-5.6") == 272_000
    assert pricing.first_boundary("claude-opus-5-5") is None
    assert pricing.capacity("claude-haiku-5-5") == {"input": 1_000_000, "output": 128_000}
    tiers = pricing.model_prices("claude-haiku-5-5")["tiers"]
    assert tiers[1] == {"above": 100000, "input": 0.5, "cache_write_5m": 0.625, "cache_write_1h": 1.0, "cache_read": 0.05, "output": 2.5}


def test_d1_unset_on_a_tier_priced_model_resolves_to_its_first_boundary_from_the_default():
    r = resolve_ceiling(Policy(), "claude-haiku-5-5")
    assert (r.ceiling, r.source) == (100_000, "default")
    assert "unset" in r.why and "100,000" in r.why


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-fable-5-1", "gpt-5", "some-unpriced-model", None])
def test_d1_unset_on_a_flat_priced_or_unpriced_model_resolves_to_none(model):
    r = resolve_ceiling(Policy(), model)
    assert r.ceiling is None and r.source == "default"


def test_d2_auto_on_a_flat_priced_model_resolves_to_none_and_says_so():
    r = resolve_ceiling(Policy(max_input_tokens="auto"), "claude-opus-5-5")
    assert r.ceiling is None and r.source == "auto"
    assert "flat price tier" in r.why


def test_d2_auto_reads_the_first_tier_boundary():
    assert resolve_ceiling(Policy(max_input_tokens="auto"), "gpt-5.6").ceiling == 272_000


def test_d1_explicit_none_is_no_ceiling_on_any_model():
    r = resolve_ceiling(Policy(max_input_tokens="none"), "claude-haiku-5-5")
    assert r.ceiling is None and r.source == "none"


@pytest.mark.parametrize("bad", [0, -1, -100_000, True, False, "100000", "1e5", 1.5, 100000.0, [], {}])
def test_d1_a_ceiling_of_zero_negative_boolean_or_numeric_string_is_refused(bad):
    with pytest.raises(PolicyError, match="max_input_tokens"):
        Policy.from_mapping({"max_input_tokens": bad}, "profile.yaml")


def test_d1_a_per_call_value_may_lower_the_ceiling():
    r = resolve_ceiling(Policy(max_input_tokens=50_000), "claude-haiku-5-5", per_call=40_000)
    assert (r.ceiling, r.source) == (40_000, "call")
    assert resolve_ceiling(Policy(), "claude-haiku-5-5", per_call=100_000).ceiling == 100_000


@pytest.mark.parametrize("per_call", [50_001, "none"])
def test_d1_a_per_call_value_above_the_profiles_is_refused(per_call):
    with pytest.raises(PolicyError, match="only lower"):
        resolve_ceiling(Policy(max_input_tokens=50_000), "claude-haiku-5-5", per_call=per_call)


def test_d1_a_per_call_none_under_the_default_ceiling_is_refused():
    with pytest.raises(PolicyError, match="only lower"):
        resolve_ceiling(Policy(), "claude-haiku-5-5", per_call="none")


@pytest.mark.parametrize("bad", [0, -5, True])
def test_d1_a_per_call_zero_negative_or_boolean_is_refused(bad):
    with pytest.raises(PolicyError):
        resolve_ceiling(Policy(), "claude-haiku-5-5", per_call=bad)


def test_fold_line_and_target_default_to_0_8_and_0_6():
    p = Policy()
    assert (p.fold_at, p.fold_target) == (0.8, 0.6)
    assert Policy(context_fold_at=0.9).fold_target == 0.6
    assert Policy(context_fold_target=0.5).fold_at == 0.8


@pytest.mark.parametrize("key", ["context_fold_at", "context_fold_target"])
@pytest.mark.parametrize("bad", [0, -0.1, 1.01, math.inf, math.nan, True, "0.8", None])
def test_amendment3_a_bad_fraction_is_refused_naming_its_key(key, bad):
    with pytest.raises(PolicyError, match=key):
        Policy.from_mapping({key: bad}, "profile.yaml")


@pytest.mark.parametrize("pair", [(0.6, 0.6), (0.5, 0.6), (0.9, 0.95)])
def test_amendment3_an_invalid_pair_is_refused(pair):
    at, target = pair
    with pytest.raises(PolicyError, match="target < line"):
        Policy.from_mapping({"context_fold_at": at, "context_fold_target": target}, "p.yaml")


def test_amendment3_an_absent_side_takes_its_default_in_the_pair_check():
    with pytest.raises(PolicyError, match="context_fold_target"):
        Policy.from_mapping({"context_fold_at": 0.5}, "p.yaml")  # 0.6 target is not below 0.5
    assert Policy.from_mapping({"context_fold_at": 1, "context_fold_target": 0.5}, "p.yaml").fold_at == 1


@pytest.mark.parametrize("bad", [1023, 0, -1, 2048.0, 1024.5, True, "4000", None])
def test_amendment3_a_bad_result_bound_is_refused(bad):
    with pytest.raises(PolicyError, match="tool_result_max_chars"):
        Policy.from_mapping({"tool_result_max_chars": bad}, "p.yaml")


def test_amendment3_result_bound_boundary_1024_is_accepted():
    assert Policy.from_mapping({"tool_result_max_chars": 1024}, "p.yaml").tool_result_max_chars == 1024


@pytest.mark.parametrize("bad", ["true", "yes", 1, 0, None])
def test_amendment3_a_non_boolean_prompt_caching_is_refused(bad):
    with pytest.raises(PolicyError, match="prompt_caching"):
        Policy.from_mapping({"prompt_caching": bad}, "p.yaml")


def test_a_stored_launch_record_reads_null_as_unset_and_refuses_malformed_values():
    p = Policy.from_mapping({"max_input_tokens": None, "tool_result_max_chars": None, "prompt_caching": False}, "record", stored=True)
    assert p.max_input_tokens is None and p.prompt_caching is False
    with pytest.raises(PolicyError):
        Policy.from_mapping({"tool_result_max_chars": 12}, "record", stored=True)


def test_a_yaml_profile_is_validated_on_parsed_types(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("max_input_tokens: 80000\ncontext_fold_at: 0.9\ncontext_fold_target: 0.5\nprompt_caching: true\napi_tools: [read]\n")
    p = Policy.from_yaml(good)
    assert (p.max_input_tokens, p.fold_at, p.fold_target, p.prompt_caching) == (80000, 0.9, 0.5, True)
    quoted = tmp_path / "quoted.yaml"
    quoted.write_text('prompt_caching: "true"\n')
    with pytest.raises(PolicyError, match=r"quoted.yaml: prompt_caching"):
        Policy.from_yaml(quoted)
    broken = tmp_path / "broken.yaml"
    broken.write_text("max_input_tokens: [\n")
    with pytest.raises(PolicyError, match="not valid YAML"):
        Policy.from_yaml(broken)


def test_flags_override_a_profile_and_are_validated():
    base = Policy(max_input_tokens=90_000, source="p.yaml")
    p = Policy.from_flags(base, ceiling="50000", fold_at="0.9", result_max="4000", caching=True)
    assert (p.max_input_tokens, p.fold_at, p.tool_result_max_chars, p.prompt_caching) == (50_000, 0.9, 4000, True)
    assert Policy.from_flags(ceiling="auto").max_input_tokens == "auto"
    for flags in ({"ceiling": "0"}, {"ceiling": "lots"}, {"fold_at": "nan"}, {"result_max": "100"}):
        with pytest.raises(PolicyError):
            Policy.from_flags(**flags)


def test_a_flag_reads_commas_only_between_groups_of_three_digits():
    """--ceiling 100,000 is read as every screen prints it; '1,00' or '100,00' (a slip for 100,000) is refused, not
    read as 100 or 10,000, as the GUI's policy editor refuses them."""
    assert Policy.from_flags(ceiling="100,000").max_input_tokens == 100_000
    assert Policy.from_flags(ceiling="1,000,000").max_input_tokens == 1_000_000
    assert Policy.from_flags(ceiling="100_000").max_input_tokens == 100_000
    for slip in ("1,00", "100,00", "1,0000", ",100", "100,", "10,,000"):
        with pytest.raises(PolicyError, match="groups of three"):
            Policy.from_flags(ceiling=slip)


def test_a_profile_sets_the_context_window_and_a_flag_beats_it(tmp_path):
    from foldscope.core.model.policy import PolicyChoice

    path = tmp_path / "window.yaml"
    path.write_text("context_window: 300000\n")
    profile = Policy.from_yaml(path)
    assert profile.context_window == 300_000 and profile.as_profile()["context_window"] == 300_000
    flagged = Policy.from_flags(context_window="150_000")
    choice = PolicyChoice(profile, (("context_window", flagged.context_window),))
    assert choice.over(Policy()).context_window == 150_000
    assert PolicyChoice(profile).over(Policy()).context_window == 300_000


@pytest.mark.parametrize("bad", [0, -1, 200_000.5, True, "200000", None])
def test_a_bad_context_window_is_refused_naming_its_key(bad):
    with pytest.raises(PolicyError, match="context_window"):
        Policy.from_mapping({"context_window": bad}, "p.yaml")


def test_the_context_window_is_foldscopes_reading_and_never_stored_in_the_launch_record():
    policy = Policy(context_window=150_000, max_input_tokens=90_000)
    assert "context_window" not in policy.as_record() and policy.as_record()["max_input_tokens"] == 90_000
