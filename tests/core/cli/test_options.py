"""One set of policy flags: fold, requests and replay resolve the same ceiling for the same flags; list options,
--no-caching, --per-call and a flag no command can honour behave the same everywhere."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli import main as cli
from foldscope.core.formats.demo import demo_path
from tests.paths import CORPUS_DEV

CLAUDE = CORPUS_DEV / "claude_code" / "session-9eda1058.jsonl"


def run(capsys, *argv) -> tuple[int, dict | None, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


def ceilings(capsys, path, flags: list[str]) -> dict[str, object]:
    """The ceiling each command resolves (a refusal: its one line on stderr)."""
    found: dict[str, object] = {}
    code, out, err = run(capsys, "requests", path, *flags, "--json")
    found["requests"] = out["ceiling"]["value"] if out else ("refused", err.count("\n"))
    code, out, err = run(capsys, "replay", path, *flags, "--strategy", "none", "--json")
    found["replay"] = out["ceiling"]["tokens"] if out else ("refused", err.count("\n"))
    code, out, err = run(capsys, "fold", path, *flags, "--json")
    if out is None and "no ceiling" in err:
        found["fold"] = None  # the fold says there is none, by name, and folds nothing
    else:
        found["fold"] = out["ceiling"] if out else ("refused", err.count("\n"))
    return found


CASES = [
    (["--ceiling", "auto", "--model", "gpt-5.6"], 272_000),  # tiered: the long-context tier's boundary
    (["--ceiling", "auto", "--model", "claude-haiku-5-5"], 100_000),
    (["--model", "gpt-4o"], None),  # flat price: unset reads as auto, which is no ceiling
    (["--ceiling", "auto", "--model", "gpt-4o"], None),
    (["--ceiling", "50000", "--per-call", "30000"], 30_000),  # a per-call value lowers it
    (["--model", "gpt-5.6", "--per-call", "200000"], 200_000),
    (["--ceiling", "50000", "--per-call", "60000"], ("refused", 1)),  # and is refused above it
    (["--ceiling", "50000", "--per-call", "none"], ("refused", 1)),
    ([], 200_000),  # the file names its model (claude-sonnet-4-5): auto is its first price tier
]


@pytest.mark.parametrize(("flags", "expected"), CASES, ids=[" ".join(f) or "no flags" for f, _ in CASES])
def test_fold_requests_and_replay_resolve_the_same_ceiling_for_the_same_flags(capsys, corpus_dev, flags, expected):
    found = ceilings(capsys, CLAUDE, flags)
    assert found == {"requests": expected, "replay": expected, "fold": expected}


def test_the_launch_record_sets_the_ceiling_unless_a_flag_overrides_it(capsys):
    assert set(ceilings(capsys, demo_path(), []).values()) == {100_000}  # the demo's api_launch
    assert set(ceilings(capsys, demo_path(), ["--per-call", "40000"]).values()) == {40_000}
    assert set(ceilings(capsys, demo_path(), ["--ceiling", "none"]).values()) == {None}


def test_a_list_option_takes_repetition_and_commas_alike(capsys):
    _, repeated, _ = run(capsys, "replay", demo_path(), "--strategy", "none", "--strategy", "band", "--json")
    _, commas, _ = run(capsys, "replay", demo_path(), "--strategy", "none,band", "--json")
    assert [t["strategy"] for t in repeated["totals"]] == ["none", "band"]
    assert repeated["totals"] == commas["totals"]
    with pytest.raises(SystemExit) as exited:  # argparse's own refusal: usage and one line, exit 2
        cli.main(["replay", str(demo_path()), "--strategy", "none,magic"])
    assert exited.value.code == 2 and "--strategy: 'magic' is not one of" in capsys.readouterr().err


def test_no_caching_turns_a_stored_option_off_and_unset_keeps_it(capsys, tmp_path):
    from foldscope.core.formats import load_session
    from foldscope.core.formats.lionagi import write_session

    session = load_session(demo_path())
    session.branch_metadata["api_launch"]["prompt_caching"] = True
    path = tmp_path / "caching.json"
    write_session(session, path)
    _, kept, _ = run(capsys, "requests", path, "--payload", "3", "--json")
    _, off, _ = run(capsys, "requests", path, "--payload", "3", "--no-caching", "--json")
    assert kept["payload"]["marks"] and not off["payload"]["marks"]
    _, on, _ = run(capsys, "requests", demo_path(), "--payload", "3", "--caching", "--json")
    assert on["payload"]["marks"] == kept["payload"]["marks"]


def test_every_measuring_command_takes_the_same_policy_flags():
    from foldscope.core.cli.options import POLICY_FLAGS

    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for command in ("fold", "requests", "replay"):
        dests = {a.dest for a in subparsers.choices[command]._actions}
        assert set(POLICY_FLAGS) | {"threads"} <= dests, command
    assert "workers" in {a.dest for a in subparsers.choices["replay"]._actions}


@pytest.mark.parametrize("value", ["x", "0"])
def test_a_refused_per_call_value_names_the_per_call_flag(capsys, value):
    """New user 27: `--per-call x` was refused as "max_input_tokens: must be an integer", naming a key not given."""
    code, _, err = run(capsys, "requests", demo_path(), "--per-call", value, "--json")
    assert code == 2 and err.startswith('foldscope: flags: --per-call: must be a positive integer, "auto" or "none", not ')
    assert "max_input_tokens" not in err


@pytest.mark.parametrize(
    "flag, value, key",
    [("--ceiling", "abc", "max_input_tokens"), ("--ceiling", "0", "max_input_tokens"), ("--fold-at", "2", "context_fold_at")],
)
def test_a_refused_policy_flag_names_the_flag_typed_and_the_key_it_sets(capsys, flag, value, key):
    """`--ceiling abc` was refused as "flags: max_input_tokens: must be an integer", naming only a key the user did
    not type: the flag first, the key (the profile's and the launch record's name) beside it."""
    code, _, err = run(capsys, "requests", demo_path(), flag, value, "--json")
    assert code == 2 and err.startswith(f"foldscope: flags: {flag} ({key}): must be ")
