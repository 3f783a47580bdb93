"""The example profile shipped in resources/ is found by its bare name, names every policy key, and is valid."""

from __future__ import annotations

from importlib import resources

from foldscope.core.model.policy import KEYS, Policy, profile_path


def test_the_shipped_caching_profile_is_found_by_name_and_turns_caching_on(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no caching.yaml here: the shipped one is meant
    for name in ("caching.yaml", "caching"):
        policy = Policy.from_yaml(name)
        assert policy.caching and policy.max_input_tokens == "auto" and policy.tool_result_max_chars == 16_000


def test_a_file_of_that_name_in_the_working_folder_comes_first(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "caching.yaml").write_text("prompt_caching: false\n")
    assert not Policy.from_yaml("caching.yaml").caching
    assert profile_path("sub/caching.yaml").parts == ("sub", "caching.yaml")  # a path with a folder is never looked up


def test_the_example_names_every_policy_key():
    text = resources.files("foldscope.resources").joinpath("caching.yaml").read_text()
    assert all(f"{key}:" in text for key in KEYS)
