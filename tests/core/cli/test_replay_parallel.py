"""`foldscope replay FILE` runs the file's strategies at once in forked processes (core.replay.parallel) and prints
byte for byte what it prints running them one after another; a failed process is one line and a whole result."""

from __future__ import annotations

import os

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats.demo import demo_path
from foldscope.core.replay import lab, parallel
from foldscope.core.request.counting import LOCAL, SWITCH
from tests.core.replay.test_billed import corpus_files
from tests.core.replay.test_parallel import allow_fork

PARENT = os.getpid()


@pytest.fixture
def forks(monkeypatch):
    """The groups each forked run split the strategies into (so a test knows the processes really ran)."""
    allow_fork(monkeypatch)
    calls: list[list[list[int]]] = []
    real = parallel.run_forked

    def counted(jobs, groups, **kwargs):
        calls.append([list(g) for g in groups])
        return real(jobs, groups, **kwargs)

    monkeypatch.setattr(parallel, "run_forked", counted)
    return calls


def printed(capsys, args, code=0):
    assert main(args) == code
    out = capsys.readouterr()
    return out.out, out.err


def serial_and_parallel(capsys, forks, args, code=0):
    before = len(forks)
    serial = printed(capsys, [*args, "--workers", "1"], code)
    assert len(forks) == before, "--workers 1 forked"
    parallel_out = printed(capsys, [*args, "--workers", "2"], code)
    if code == 0:
        assert len(forks) == before + 1 and len(forks[-1]) >= 2, "the strategies did not run in several processes"
    return serial, parallel_out


@pytest.mark.parametrize("ceiling", ["auto", "100000"])
def test_replay_of_every_dev_corpus_file_prints_the_same_bytes_in_parallel_as_serially(corpus_dev, capsys, forks, ceiling):
    files = corpus_files(corpus_dev)
    replayed = 0
    for path in files:
        args = ["replay", str(path), "--ceiling", ceiling, "--json", "--per-request"]
        code = 2 if "run_manifest" in path.name else 0  # a lionagi run manifest is no session: one line, both ways
        serial, parallel_out = serial_and_parallel(capsys, forks, args, code)
        assert parallel_out == serial, path
        replayed += code == 0
    assert replayed > 20


def test_a_generated_session_under_every_strategy_in_any_order_prints_the_same_bytes(capsys, forks):
    """The demo under a ceiling it folds under, caching on: every strategy folds or compacts, and each order of the
    strategies gives the same runs whichever process ran them (nothing a strategy shares is changed for the next)."""
    base = ["replay", str(demo_path()), "--ceiling", "20000", "--caching"]
    for strategies in ("recorded,none,band,compaction,adr", "adr,compaction,band,none,recorded", "band,adr"):
        for shown in (["--json", "--per-request", "--check"], []):
            serial, parallel_out = serial_and_parallel(capsys, forks, [*base, "--strategy", strategies, *shown])
            assert parallel_out == serial
    text = serial[0]
    assert "band" in text and "adr" in text and "folds" in text


def test_one_file_runs_its_strategies_serially_with_the_switch_or_one_strategy(capsys, forks, monkeypatch):
    args = ["replay", str(demo_path()), "--ceiling", "20000", "--json", "--per-request"]
    printed(capsys, [*args, "--strategy", "adr"])
    monkeypatch.setenv(SWITCH, LOCAL)
    serial = printed(capsys, args)
    assert forks == []
    monkeypatch.delenv(SWITCH)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert printed(capsys, args) == serial and len(forks) == 1  # the default: the CPU count


def test_a_folder_replays_each_file_in_one_process_never_a_pool_in_a_pool(tmp_path, capsys, monkeypatch):
    """The folder's pool workers are forks of this process, so the wrapper is theirs too: a file replayed with more
    than one worker would be a skipped file with the wrapper's error."""
    import json

    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes(demo_path().read_bytes())
    real = lab.replay

    def one_worker(*args, workers=1, **kwargs):
        if workers != 1:
            raise RuntimeError(f"a pool worker replayed its file with {workers} workers")
        return real(*args, workers=workers, **kwargs)

    monkeypatch.setattr(lab, "replay", one_worker)
    assert main(["replay", str(tmp_path), "--ceiling", "20000", "--json", "--workers", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["skipped"] == [] and out["sessions"] == 2 and len(out["table"]) == 10


@pytest.mark.parametrize("how", ["raise", "kill"])
def test_a_failed_strategy_process_is_one_line_and_the_result_stays_whole(capsys, forks, monkeypatch, how):
    args = ["replay", str(demo_path()), "--ceiling", "20000", "--strategy", "adr,band,compaction", "--json", "--per-request"]
    serial = printed(capsys, [*args, "--workers", "1"])
    real = lab.run_strategy

    def breaks_in_a_child(*a, **k):
        if os.getpid() != PARENT:
            if how == "kill":
                os.kill(os.getpid(), 9)
            raise RuntimeError("made to fail")
        return real(*a, **k)

    monkeypatch.setattr(lab, "run_strategy", breaks_in_a_child)
    out, err = printed(capsys, [*args, "--workers", "2"])
    assert out == serial[0] and forks
    why = "killed by SIGKILL" if how == "kill" else "RuntimeError: made to fail"
    # Three strategies on two workers run a process each: adr, the heaviest, here; compaction and band in children.
    assert err == "".join(
        f"foldscope: replay: the process running {name} failed ({why}); running it in this one\n" for name in ("compaction", "band")
    )


def test_three_strategies_on_two_workers_run_a_process_each_and_the_totals_alone_come_back_the_same(capsys, forks):
    """On two cores three strategies in three processes share the time (done at 1.5 strategies' time, not 2), and a
    run without --per-request sends its totals back without its rows: the same bytes as one after another."""
    args = ["replay", str(demo_path()), "--ceiling", "20000", "--caching", "--strategy", "band,adr,compaction"]
    for shown in (["--json"], []):
        serial, parallel_out = serial_and_parallel(capsys, forks, [*args, *shown])
        assert parallel_out == serial
        assert sorted(len(g) for g in forks[-1]) == [1, 1, 1]
