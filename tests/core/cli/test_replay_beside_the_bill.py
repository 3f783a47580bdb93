"""Issue 41, findings 3 and 4: a replay says when no ceiling lets its strategies act, sets them beside the modelled
recording (the bill labelled as the bill), and never calls a strategy that refused requests free, alone or in a folder."""

import json

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.readout.agent_limits import agent_limits
from foldscope.core.replay.lab import run_strategy
from foldscope.core.replay.rows import cost_text
from foldscope.core.request.measure import Measure

FLAT = "codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"  # gpt-5.3-codex: one flat tier
SMALL = "codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"  # one request, unseen head 34k
MANAGED = ("none", "band", "compaction", "adr")


def under_the_head(path) -> int:
    """A ceiling at or below the file's unseen head times its scale: no request can fit under it, so adr refuses all."""
    measure = Measure(load_session(path))
    measure.calibrate(prefix=False, predict=False)
    ceiling = int(measure.unseen_head * measure.scale) - 1_000
    under = Measure(load_session(path), Policy(max_input_tokens=ceiling))
    under.calibrate(prefix=False, predict=False)
    assert under.impossible_ceiling(), "the unseen head is over the ceiling"
    return ceiling


def test_with_no_ceiling_the_replay_says_in_one_line_that_the_strategies_do_not_act_why_and_a_ceiling_to_give(corpus_dev, capsys):
    path = corpus_dev / FLAT
    assert main(["replay", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ceiling"]["tokens"] is None and "one flat price tier" in out["ceiling"]["why"]
    by = {t["strategy"]: t for t in out["totals"]}
    assert len({(by[s]["peak"], by[s]["cost_usd"]) for s in MANAGED}) == 1, "the notice is true: all four are one"
    notice = out["no_ceiling"]
    assert notice and "\n" not in notice
    assert "none, band, compaction and adr do not act" in notice and out["ceiling"]["why"] in notice
    limits = agent_limits(load_session(path))  # whatever resolves the agent's window today
    assert limits.window is not None and f"{limits.window.tokens:,}" in notice
    assert limits.compaction is not None and f"{limits.compaction.tokens:,}" in notice and "--ceiling" in notice
    assert main(["replay", str(path)]) == 0
    text = capsys.readouterr().out
    assert [line for line in text.splitlines() if "do not act" in line] == [notice]
    assert main(["replay", str(path), "--ceiling", "150000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["no_ceiling"] is None  # with a ceiling the strategies act


def test_the_modelled_recording_stands_beside_the_strategies_and_the_bill_is_labelled_as_the_bill(corpus_dev, capsys):
    path = corpus_dev / FLAT
    assert main(["replay", str(path), "--json"]) == 0
    by = {t["strategy"]: t for t in json.loads(capsys.readouterr().out)["totals"]}
    recorded, session = by["recorded"], load_session(path)
    reported = sum(r.usage.cache_read for r in session.trace)
    assert recorded["cache_read"] == reported  # the bill's column is the provider's usage
    assert recorded["modelled_cost_usd"] != recorded["cost_usd"]
    assert main(["replay", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if "recorded, as billed" in line).split("  ")
    assert [h.strip() for h in header if h.strip()][:3] == ["recorded, as billed", "recorded, modelled", "none"]
    cost = next(line for line in lines if line.startswith("cost_usd")).split()[1:]
    assert cost[:3] == [f"${recorded['cost_usd']:,.4f}", f"${recorded['modelled_cost_usd']:,.4f}", f"${by['none']['cost_usd']:,.4f}"]
    cache_read = next(line for line in lines if line.startswith("cache_read")).split()[1:]
    assert cache_read[:2] == [f"{reported:,}", f"{recorded['modelled_cache_read']:,}"]
    assert any("set them against recorded's modelled cost" in line and "not its bill" in line for line in lines)


def test_a_cost_over_refused_requests_is_not_comparable_never_zero(corpus_dev, capsys):
    path = corpus_dev / SMALL
    ceiling = under_the_head(path)
    session = load_session(path)
    totals = run_strategy(session, "adr", Measure(session, Policy(max_input_tokens=ceiling))).totals()
    assert totals["refused"] == totals["requests"] == len(session.trace)
    assert totals["cost_usd"] is None and totals["modelled_cost_usd"] is None and totals["cost_not_comparable"]
    assert cost_text(totals) == f"not comparable ({totals['refused']} refused)"
    assert main(["replay", str(path), "--ceiling", str(ceiling), "--strategy", "recorded,adr"]) == 0
    text = capsys.readouterr().out
    cost = next(line for line in text.splitlines() if line.startswith("cost_usd"))
    assert "not comparable (1 refused)" in cost and "$0.0000" not in text


def test_a_folder_row_shows_refused_and_over_ceiling_counts_and_carries_the_files_warnings(corpus_dev, tmp_path, capsys):
    folder = tmp_path / "fleet"
    folder.mkdir()
    for name in (SMALL, FLAT):  # links, not copies: the folder holds the dev files as they are
        (folder / name.split("/")[1]).symlink_to(corpus_dev / name)
    ceiling = under_the_head(corpus_dev / SMALL)
    args = ["--ceiling", str(ceiling), "--strategy", "recorded,adr", "--workers", "1"]
    assert main(["replay", str(corpus_dev / SMALL), *args, "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert alone["warnings"] and "no request can fit under it" in alone["warnings"][0]
    assert main(["replay", str(folder), *args, "--json"]) == 0
    table = json.loads(capsys.readouterr().out)["table"]
    row = next(r for r in table if r["file"].endswith(SMALL.split("/")[1]) and r["strategy"] == "adr")
    assert row["refused"] == row["requests"] == 1 and row["over_ceiling"] == 1
    assert row["cost_usd"] is None and row["cost_not_comparable"]
    assert row["warnings"] == alone["warnings"]  # what the file alone says, its row says
    assert main(["replay", str(folder), *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    mine = [i for i, line in enumerate(lines) if SMALL.split("/")[1] in line]
    adr = next(lines[i] for i in mine if " adr " in lines[i])
    assert "refused     1" in adr and "over ceiling     1" in adr and "not comparable (1 refused)" in adr
    assert "$0.0000" not in adr
    assert lines[mine[-1] + 1] == f"    warning: {alone['warnings'][0]}"


def test_a_folder_row_says_the_first_warning_then_how_many_more():
    from foldscope.core.cli.replay import format_folder

    row = {
        "file": "f.jsonl",
        "format": "codex",
        "model": "m",
        "ceiling": 10,
        "strategy": "recorded",
        "requests": 2,
        "refused": 0,
        "over_ceiling": 0,
        "peak": 5,
        "cost_usd": 0.5,
        "warnings": ["first", "second", "third"],
    }
    text = format_folder({"sessions": 1, "folder": "d", "skipped": [], "table": [row]})
    assert text.splitlines()[2] == "    warning: first (and 2 more)"


@pytest.mark.parametrize("refused, shown", [(0, "$0.5000"), (1, "not comparable (1 refused)")])
def test_cost_text_shows_a_cost_over_refusals_as_not_comparable(refused, shown):
    from foldscope.core.replay.rows import not_comparable_why

    t = {
        "refused": refused,
        "cost_usd": None if refused else 0.5,
        "cost_not_comparable": not_comparable_why(refused, 2) if refused else None,
    }
    assert cost_text(t) == shown


def test_a_folder_row_carries_the_no_ceiling_line_its_file_alone_gives(corpus_dev, tmp_path, capsys):
    folder = tmp_path / "fleet"
    folder.mkdir()
    (folder / FLAT.split("/")[1]).symlink_to(corpus_dev / FLAT)
    assert main(["replay", str(corpus_dev / FLAT), "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)["no_ceiling"]
    assert alone
    assert main(["replay", str(folder), "--workers", "1", "--json"]) == 0
    assert {r["no_ceiling"] for r in json.loads(capsys.readouterr().out)["table"]} == {alone}
    assert main(["replay", str(folder), "--workers", "1"]) == 0
    assert capsys.readouterr().out.splitlines().count(f"    {alone}") == 1  # once, under the file's rows


@pytest.mark.parametrize(
    "reported, shown", [(None, "over ceiling     -"), (0, "over ceiling 0 reported"), (13, "over ceiling 13 reported")]
)
def test_a_folder_row_shows_no_reported_figure_where_the_provider_counted_none(reported, shown):
    """A recorded file replayed uncounted in a folder: over the ceiling is the reported figure, and "-" where the
    provider counted none (as the single file's table and the GUI show None), never a 0 that reads as measured."""
    from foldscope.core.cli.replay import folder_row

    row = {"file": "f.jsonl", "requests": 2, "refused": 0, "over_ceiling": None, "reported_over_ceiling": reported}
    row |= {"peak": None, "peak_reported_input": 5, "cost_usd": 0.5}
    assert shown in folder_row("recorded", row)


def test_the_recording_as_billed_is_the_bill_usage_gives_requests_that_reported_no_usage_left_out_and_said(capsys):
    """review11: on a real Cline task with 7 failed requests that reported no usage, `replay --strategy recorded`
    gave "recorded, as billed" $0.5327 where `usage` and `cache` bill $0.4978: the 7 were priced by the cache model
    into the bill. The bill is now what the provider reported, the 7 left out and their modelled cost said apart;
    the modelled recording keeps every request."""
    from tests.paths import CORPUS

    task = CORPUS / "staged/cline/fineye"
    if not (task / "ui_messages.json").is_file():
        pytest.skip(f"corpus not present at {task}")
    assert main(["usage", str(task), "--json"]) == 0
    bill = json.loads(capsys.readouterr().out)["total"]
    assert main(["replay", str(task / "ui_messages.json"), "--strategy", "recorded", "--json"]) == 0
    (recorded,) = json.loads(capsys.readouterr().out)["totals"]
    assert bill["unreported_requests"] == recorded["unreported_requests"] == 7
    assert recorded["reported_requests"] == bill["requests"] - 7 and recorded["requests"] == bill["requests"]
    assert recorded["cost_usd"] == pytest.approx(bill["cost_usd"], abs=1e-4)
    for part in ("fresh", "cache_read", "cache_write", "output"):
        assert recorded[part] == bill[part], part
    assert recorded["unreported_modelled_usd"] > 0 and recorded["modelled_output"] > recorded["output"]
    assert main(["replay", str(task / "ui_messages.json"), "--strategy", "recorded"]) == 0
    said = capsys.readouterr().out
    assert "the 7 that reported no usage left out of the bill and of this line" in said
    # review12: the model's side of the line is the same 24 requests the bill is (their modelled cost, not all 31's)
    model_cost = round(recorded["modelled_cost_usd"] - recorded["unreported_modelled_usd"], 4)
    assert f"cache read {recorded['modelled_cache_read'] - recorded['unreported_modelled_cache_read']:,} vs" in said
    assert f"cost ${model_cost:.4f} vs ${recorded['cost_usd']:.4f}" in said
