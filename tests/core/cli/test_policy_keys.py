"""The policy's keys are declared once (core.model.policy.POLICY_KEYS): every key is a flag of every command that
takes the policy, with the table's default, and a profile's key; a key that is none is refused in one line."""

from __future__ import annotations

import argparse
from dataclasses import fields

import pytest

from foldscope.core.cli import main as cli
from foldscope.core.cli.options import flag_help, policy_choice
from foldscope.core.formats.demo import demo_path
from foldscope.core.model.policy import KEY, KEYS, LAUNCH_KEYS, POLICY_KEYS, Policy, PolicyChoice, resolve_ceiling

# A valid value per key: as typed after its flag, and as a profile's YAML holds it (a key added to the table without
# one here fails test_every_key_has_an_example, so it is never left out of the tests below).
EXAMPLES = {
    "max_input_tokens": (["--ceiling", "90000"], "90000", 90_000),
    "context_fold_at": (["--fold-at", "0.7"], "0.7", 0.7),
    "context_fold_target": (["--target", "0.5"], "0.5", 0.5),
    "tool_result_max_chars": (["--result-max", "20000"], "20000", 20_000),
    "prompt_caching": (["--no-caching"], "false", False),
    "model": (["--model", "claude-haiku-5-5"], "claude-haiku-5-5", "claude-haiku-5-5"),
    "context_window": (["--context-window", "150000"], "150000", 150_000),
}
MEASURING = ("fold", "requests", "replay", "composition", "report")  # the commands that take the policy
WINDOW = ("inspect", "composition", "report")  # the commands that show the context window


def commands() -> dict[str, argparse.ArgumentParser]:
    return next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices


def test_every_key_has_an_example_and_is_a_policy_field_in_the_tables_order():
    assert tuple(EXAMPLES) == KEYS
    assert tuple(f.name for f in fields(Policy) if f.name != "source") == KEYS
    assert LAUNCH_KEYS == tuple(k for k in KEYS if k != "context_window")  # the window is how foldscope reads, not stored


@pytest.mark.parametrize("key", POLICY_KEYS, ids=KEYS)
def test_each_key_is_a_flag_of_every_command_that_takes_it_unset_by_default_and_saying_the_tables_default(key):
    takers = MEASURING if key.commands == "measuring" else WINDOW
    for name in takers:
        action = next((a for a in commands()[name]._actions if key.flag in a.option_strings), None)
        assert action is not None, f"{name} has no {key.flag}"
        assert action.dest == key.dest and action.default is None, name  # unset: the launch record's, else the default
        assert action.help == flag_help(key) and action.help.endswith(f"(default: {key.unset_said})"), name
    for name in set(commands()) - set(MEASURING) - set(WINDOW):  # no other command offers it as the policy's key
        assert all(a.help != flag_help(key) for a in commands()[name]._actions), name


@pytest.mark.parametrize("key", POLICY_KEYS, ids=KEYS)
def test_each_keys_flag_sets_that_key_and_left_out_leaves_it_at_the_tables_default(key):
    argv, _, value = EXAMPLES[key.name]
    parser = commands()["composition"]  # takes every key's flag
    choice = policy_choice(parser.parse_args([*argv, "FILE"]))
    assert choice.flags == ((key.name, value),)
    assert getattr(choice.over(Policy()), key.name) == value
    unset = policy_choice(parser.parse_args(["FILE"])).over(Policy())
    assert getattr(unset, key.name) is None


def test_the_line_target_and_ceiling_unset_read_as_the_tables_defaults(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("# sets nothing\n")
    policy = Policy.from_yaml(path)
    assert (policy.fold_at, policy.fold_target) == (KEY["context_fold_at"].default, KEY["context_fold_target"].default)
    assert resolve_ceiling(policy, "gpt-5.6").why.startswith(f"unset, read as {KEY['max_input_tokens'].default}: ")
    assert resolve_ceiling(policy, "gpt-5.6").ceiling == resolve_ceiling(Policy(max_input_tokens="auto"), "gpt-5.6").ceiling


@pytest.mark.parametrize("key", POLICY_KEYS, ids=KEYS)
def test_each_key_is_accepted_by_the_profile_loader(key, tmp_path):
    _, text, value = EXAMPLES[key.name]
    path = tmp_path / "profile.yaml"
    path.write_text(f"{key.name}: {text}\n")
    assert getattr(Policy.from_yaml(path), key.name) == value
    assert getattr(PolicyChoice(Policy.from_yaml(path)).over(Policy()), key.name) == value


def test_an_unknown_profile_key_is_refused_in_one_line_naming_the_file_and_key(tmp_path, capsys):
    path = tmp_path / "typo.yaml"
    path.write_text("max_input_tokens: 90000\nfold_at: 0.7\n")
    code = cli.main(["requests", str(demo_path()), "--profile", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"{path}: fold_at: not a policy key: did you mean context_fold_at?" in err


def test_an_agents_profile_keeps_its_own_keys_beside_the_policys(tmp_path):
    path = tmp_path / "agent.yaml"
    path.write_text("api_tools: [read]\nsystem: be brief\ncontext_fold_at: 0.9\n")
    assert Policy.from_yaml(path).fold_at == 0.9
