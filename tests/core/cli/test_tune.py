"""`foldscope tune`: the sweep from the command line, its options, its outputs and its one-line refusals."""

import csv
import json

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats.demo import write_demo


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _fleet(folder):
    for n, rounds in enumerate((4, 8)):
        write_demo(folder / f"s{n}.json", seed=n + 3, rounds=rounds)


def test_tune_reports_a_row_per_policy_and_a_recommendation(tmp_path, capsys):
    _fleet(tmp_path)
    code, out, err = _run(
        capsys, "tune", str(tmp_path), "--ceiling", "9000,none", "--strategy", "adr", "--strategy", "none", "--workers", "1", "--json"
    )
    assert code == 0, err
    result = json.loads(out)
    assert result["sessions"] == 2 and result["failed"] == []
    assert len(result["policies"]) == 4
    for row in result["policies"]:
        assert {
            "sessions",
            "requests",
            "refused",
            "over_ceiling",
            "folds",
            "rewrites",
            "cache_read_share",
            "cost_usd",
            "cost_vs_recorded",
            "bill_usd",
        } <= set(row)
    assert result["recommendation"]["policy"] in {p["policy"] for p in result["policies"]}


def test_a_list_option_takes_commas_and_repetition_alike(tmp_path, capsys):
    _fleet(tmp_path)
    _, commas, _ = _run(capsys, "tune", str(tmp_path), "--ceiling", "9000,20000", "--workers", "1", "--json")
    _, repeated, _ = _run(capsys, "tune", str(tmp_path), "--ceiling", "9000", "--ceiling", "20000", "--workers", "1", "--json")
    assert json.loads(commas) == json.loads(repeated)


def test_tune_writes_the_per_session_rows_to_csv(tmp_path, capsys):
    folder = tmp_path / "fleet"
    folder.mkdir()
    _fleet(folder)
    code, out, err = _run(
        capsys, "tune", str(folder), "--ceiling", "9000", "--strategy", "adr,band", "--workers", "1", "-o", str(tmp_path / "sweep")
    )
    assert code == 0, err
    rows = list(csv.DictReader((tmp_path / "sweep.csv").open(encoding="utf-8")))
    assert len(rows) == 2 * 2  # two sessions times two policies
    assert json.loads((tmp_path / "sweep.json").read_text())["recommendation"]
    assert "recommended:" in out or "no recommendation:" in out


def test_tune_refuses_bad_flags_in_one_line(tmp_path, capsys):
    _fleet(tmp_path)
    for argv, word in (
        (["--ceiling", "0"], "max_input_tokens"),
        (["--caching", "maybe"], "caching"),
        (["--scheduler", "tcp://127.0.0.1:1"], "--engine dask"),
        (["--strategy", "recorded"], "strategy"),
    ):
        code, out, err = _run(capsys, "tune", str(tmp_path), *argv)
        assert code == 2 and word in err and len(err.strip().splitlines()) == 1, (argv, err)
    code, _, err = _run(capsys, "tune", str(tmp_path / "missing"))
    assert code == 2 and "no such file or folder" in err


def test_named_profiles_from_a_yaml_file(tmp_path, capsys):
    (tmp_path / "s").mkdir()
    _fleet(tmp_path / "s")
    profiles = tmp_path / "policies.yaml"
    profiles.write_text(
        "tight:\n  max_input_tokens: 9000\n  strategy: adr\nloose:\n  max_input_tokens: none\n  strategy: none\n", encoding="utf-8"
    )
    code, out, err = _run(capsys, "tune", str(tmp_path / "s"), "--policies", str(profiles), "--workers", "1", "--json")
    assert code == 0, err
    assert [p["policy"] for p in json.loads(out)["policies"]] == ["tight", "loose"]


def test_an_unset_ceiling_and_bound_are_labelled_as_launched_since_each_sessions_launch_record_gives_them(capsys, tmp_path):
    """Polish 6: the label said "ceiling auto" while a native file was swept at the 50,000 its launch record held."""
    from foldscope.core.formats.demo import demo_path

    data = json.loads(demo_path().read_text(encoding="utf-8"))
    data["branch"]["metadata"]["api_launch"]["max_input_tokens"] = 50_000
    path = tmp_path / "launched-at-50000.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["tune", str(path), "--workers", "1", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["ceiling"] == 50_000
    assert row["policy"] == "adr, ceiling as launched, bound as launched, caching as recorded"
    assert main(["tune", str(path), "--workers", "1", "--ceiling", "auto", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["policy"].startswith("adr, ceiling auto, ") and row["ceiling"] == 100_000  # the model's first tier


def test_result_max_none_is_the_launch_records_bound_as_its_help_says(capsys, tmp_path):
    """Polish 6: `--result-max none` read as "no bound" in --help, yet a session launched with a bound kept it (none is
    unset: absence never erases a stored option)."""
    from foldscope.core.formats.demo import demo_path

    data = json.loads(demo_path().read_text(encoding="utf-8"))
    data["branch"]["metadata"]["api_launch"]["tool_result_max_chars"] = 4_000
    bounded = tmp_path / "launched-with-a-bound.json"
    bounded.write_text(json.dumps(data), encoding="utf-8")

    def cost(path, *flags):
        assert main(["tune", str(path), "--workers", "1", "--json", *flags]) == 0
        (row,) = json.loads(capsys.readouterr().out)["rows"]
        return row["cost_usd"]

    assert cost(bounded, "--result-max", "none") == cost(bounded) != cost(demo_path(), "--result-max", "none")
    with pytest.raises(SystemExit):
        main(["tune", "--help"])
    assert "(none, as unset: the launch record's, else no bound)" in " ".join(capsys.readouterr().out.split())


def test_the_text_writes_a_policy_s_ceiling_and_bound_with_separators_and_json_keeps_its_key(tmp_path, capsys):
    # The text printed "ceiling 100000" and "bound 4096" where every other figure has its thousands separated; the
    # label stays the CSV's and JSON's key as it was, so a script reading them is not broken.
    _fleet(tmp_path)
    argv = ["tune", str(tmp_path), "--ceiling", "9000", "--result-max", "4096", "--strategy", "adr", "--workers", "1"]
    code, out, err = _run(capsys, *argv)
    assert code == 0, err
    rows = [line for line in out.splitlines() if line.startswith("adr, ")]
    assert rows and all(row.startswith("adr, ceiling 9,000, bound 4,096, ") for row in rows)
    assert "  adr, ceiling 9,000, bound 4,096, caching as recorded: " in out and "9000" not in out  # ruled out, by name
    code, out, err = _run(capsys, *argv, "--json")
    assert [p["policy"] for p in json.loads(out)["policies"]] == ["adr, ceiling 9000, bound 4096, caching as recorded"]
