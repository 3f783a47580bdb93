"""`foldscope tune DIR|FILE...`: sweep a grid of policies (or named profiles) over many sessions, and recommend one."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sys
import threading
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from foldscope.core.cli.progress import Progress
from foldscope.core.cli.words import num, plural
from foldscope.core.model.money_text import usd_text as _usd
from foldscope.core.model.outputs import output_target
from foldscope.core.model.policy import PolicyError
from foldscope.core.model.session import ReadError
from foldscope.core.readout.tune_facts import agent_window
from foldscope.core.replay.fleet import ENGINES, Cancelled, EngineError, run_engine
from foldscope.core.replay.strategies import STRATEGIES
from foldscope.core.replay.tune import (
    PolicyPoint,
    compact_points,
    grid,
    grid_cachings,
    grid_items,
    grid_numbers,
    points_from_profiles,
    session_paths,
    summarise,
    tune_session,
)

SESSION_FIELDS = (
    "file",
    "format",
    "model",
    "policy",
    "strategy",
    "ceiling",
    "requests",
    "refused",
    "over_ceiling",
    "folds",
    "rewrites",
    "fresh",
    "cache_read",
    "cache_write",
    "peak",
    "cost_usd",
    "recorded_modelled_cost_usd",
    "bill_usd",
    "cost_not_comparable",
    "cache",
    "agent",
    "window",
    "compact_at",
    "compacts_at",
)


COLUMNS = (
    (
        "policy",
        "the policy swept: strategy, ceiling, line, target, result bound, caching (as launched: each session's launch "
        "record's, else auto for the ceiling and none for the bound; caching as recorded: the session's own setting; no "
        "marks placed by the policy: none placed, though a provider that caches by itself still reads); or "
        "the agent's own compaction at a fraction of its window",
    ),
    ("requests", "requests over every session"),
    ("refused", "requests the policy could not send"),
    ("over", "requests whose estimate was at or past the ceiling"),
    ("folds", "folds or compactions made"),
    ("rewrites", "requests that changed what was cached before its end"),
    ("read share", "the share of input read from the cache"),
    ("cost", "the policy's cost under the cache model"),
    ("vs recorded", "cost divided by recorded, modelled"),
    ("recorded, modelled", "the recorded views under the same cache model: what to set cost against"),
    ("bill", "the recording as billed (reported usage priced), beside, never the baseline"),
)


def register(subparsers) -> None:
    from foldscope.core.cli.output import columns_help

    p = subparsers.add_parser(
        "tune",
        help="sweep policies over many sessions and name the cheapest safe one",
        **columns_help("A row per policy over every session, then the one recommended.", COLUMNS),
    )
    p.add_argument("inputs", nargs="*", metavar="DIR|FILE", help="session files, folder trees, or fsspec URLs")
    p.add_argument("--from-library", action="store_true", help="also sweep the sessions in the library")
    p.add_argument("--db", metavar="PATH", help="the library, with --from-library")
    p.add_argument(
        "--ceiling",
        action="append",
        metavar="N,...",
        help="ceilings (N, auto or none); commas or repeat (default: each session's launch record, else auto)",
    )
    p.add_argument(
        "--fold-at", action="append", metavar="F,...", help="lines, fractions of the ceiling (default: the launch record's, else 0.8)"
    )
    p.add_argument(
        "--target", action="append", metavar="F,...", help="targets, fractions of the ceiling (default: the launch record's, else 0.6)"
    )
    p.add_argument(
        "--result-max",
        action="append",
        metavar="N|none,...",
        help="result bounds in characters (none, as unset: the launch record's, else no bound)",
    )
    p.add_argument(
        "--caching",
        action="append",
        metavar="on|off,...",
        help="prompt caching on, off, or both (default: the stored option, else as recorded: the session's own caching)",
    )
    p.add_argument(
        "--strategy",
        action="append",
        metavar="S,...",
        help=f"strategies among {', '.join(s for s in STRATEGIES if s != 'recorded')} (default adr)",
    )
    p.add_argument(
        "--compact-at",
        action="append",
        metavar="F,...",
        help="the agent's own compaction with its knob set for these fractions of its window (Claude Code's "
        "autoCompactWindow, Codex's model_auto_compact_token_limit, pi's compaction.reserveTokens, "
        "Cline's autoCondenseThreshold, Gemini CLI's model.compressionThreshold)",
    )
    p.add_argument("--policies", metavar="FILE.yaml", help="named profiles instead of a grid")
    p.add_argument("--engine", choices=ENGINES, default="local", help="local process pool (default) or dask")
    p.add_argument("--workers", type=int, metavar="N", help="processes (local) or LocalCluster workers (dask)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="with --engine dask: an existing cluster's scheduler")
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write the per-session rows to OUT.csv (and OUT.parquet with pyarrow) and the whole result to OUT.json",
    )
    p.add_argument("--progress", action="store_true", help="report progress on stderr even when it is not a terminal")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_tune, format=format_tune)


def points_from(args) -> list[PolicyPoint]:
    """The policies to sweep: a YAML file of named profiles, or every combination of the grid's flags."""
    if args.policies:
        if any(getattr(args, k) for k in ("ceiling", "fold_at", "target", "result_max", "caching", "compact_at")):
            raise PolicyError("--policies", "policies", "names whole profiles; leave out the grid's flags")
        import yaml

        try:
            data = yaml.safe_load(Path(args.policies).read_text(encoding="utf-8"))
        except OSError as exc:
            raise PolicyError(args.policies, "", f"cannot read: {exc.strerror or exc}") from None
        except (yaml.YAMLError, UnicodeError) as exc:
            raise PolicyError(args.policies, "", f"not valid YAML: {str(exc).splitlines()[0]}") from None
        except RecursionError:
            raise PolicyError(args.policies, "", "not a policies file: nested too deeply to read") from None
        if not isinstance(data, dict):
            raise PolicyError(args.policies, "", "must map each profile's name to its keys")
        return points_from_profiles(data, args.policies)
    result_maxes = grid_numbers(args.result_max, int, "--result-max", "result-max")
    cachings = grid_cachings(args.caching, "--caching")
    compact = compact_points(
        [f for f in grid_numbers(args.compact_at, float, "--compact-at", "compact-at") if f is not None], result_maxes, cachings
    )
    if compact and not any(getattr(args, k) for k in ("strategy", "ceiling", "fold_at", "target")):
        return compact  # the agents' own compaction alone: no grid of foldscope's strategies beside it
    strategies = grid_items(args.strategy) or ["adr"]
    for strategy in strategies:
        if strategy not in STRATEGIES or strategy == "recorded":
            raise PolicyError("--strategy", "strategy", f"{strategy!r} is not one of adr, band, compaction, none")
    return compact + grid(
        ceilings=grid_items(args.ceiling) or [None],
        fold_ats=grid_numbers(args.fold_at, float, "--fold-at", "fold-at"),
        targets=grid_numbers(args.target, float, "--target", "target"),
        result_maxes=result_maxes,
        cachings=cachings,
        strategies=strategies,
    )


def library_paths(db: str | None) -> list[str]:
    """The source files of the sessions in the library (a session whose source is gone fails by name)."""
    from foldscope.core.store.library import Library

    library = Library(db)
    try:
        return sorted({row["source"] for row in library.list_sessions() if row.get("source")})
    finally:
        library.close()


def run_tune(args) -> Any:
    from foldscope.core.cli.main import UsageError

    if args.scheduler and args.engine != "dask":
        raise UsageError("--scheduler needs --engine dask")
    points = points_from(args)  # every policy is checked before any session is read
    inputs = list(args.inputs)
    if not inputs and not args.from_library:
        raise UsageError("tune needs sessions: DIR, FILE... or --from-library")
    for given in inputs:
        if "://" not in given and not Path(given).exists():
            raise ReadError(given, "path", "no such file or folder")
    paths = session_paths(inputs) + (library_paths(args.db) if args.from_library else [])
    paths = sorted(set(paths))
    if not paths:
        raise UsageError(f"{', '.join(inputs) or 'the library'}: no session files found")
    if args.output:  # refused before the sweep's work, not after it
        for name in output_names(args.output):
            output_target(name, paths)
    progress = Progress(len(paths), args.progress or sys.stderr.isatty())
    cancel, results = threading.Event(), []
    task = partial(tune_session, limits=agent_window) if any(p.compact_at is not None for p in points) else tune_session
    stream = run_engine(args.engine, paths, points, args.workers, args.scheduler, cancel, task)
    try:
        with contextlib.closing(stream):  # closing the stream stops the engine and its workers
            for result in stream:
                results.append(result)
                progress.step(result)
    except EngineError as exc:
        progress.close()
        raise UsageError(str(exc)) from None
    except (KeyboardInterrupt, Cancelled):
        cancel.set()
        progress.close()
        print(f"foldscope: tune stopped after {progress.done} of {len(paths)} files; no worker is left running", file=sys.stderr)
        return 130
    progress.close()
    from foldscope.core.cli.options import refuse_when_nothing_read

    refuse_when_nothing_read(inputs, args.from_library, results)
    out = summarise(results, points)
    if args.output:
        out["written"] = write_outputs(args.output, out, read=paths)
    return out


def write_outputs(base: str, out: dict[str, Any], read: Sequence[str | Path] = ()) -> list[str]:
    """OUT.csv (and OUT.parquet when pyarrow is installed) with a row per session and policy; OUT.json whole.
    None of them is written over a swept session, a device or a link (core.model.outputs): all are checked first."""
    from foldscope.core.model.outputs import write_output

    names = output_names(base)
    pyarrow = _pyarrow()
    for name in names:
        output_target(name, read)
    table = io.StringIO(newline="")
    writer = csv.DictWriter(table, fieldnames=SESSION_FIELDS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(out["rows"])
    write_output(names[0], table.getvalue(), read)
    write_output(names[1], json.dumps({k: v for k, v in out.items() if k != "written"}, indent=2, ensure_ascii=False), read)
    if pyarrow is not None:
        sink = pyarrow.BufferOutputStream()
        pyarrow.parquet.write_table(pyarrow.Table.from_pylist([{k: row.get(k) for k in SESSION_FIELDS} for row in out["rows"]]), sink)
        write_output(names[2], sink.getvalue().to_pybytes(), read)
    return names


def output_names(base: str) -> list[str]:
    """The files `-o BASE` writes: BASE.csv, BASE.json, and BASE.parquet where pyarrow is installed."""
    return [f"{base}.csv", f"{base}.json", *([f"{base}.parquet"] if _pyarrow() is not None else [])]


def _pyarrow() -> Any:
    try:
        import pyarrow  # type: ignore[import-not-found]
        import pyarrow.parquet  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        return None
    return pyarrow


def format_tune(out: dict[str, Any]) -> str:
    from foldscope.core.readout.tune_facts import files_swept

    out = in_words(out)
    lines = [files_swept(out)]  # the files, as the progress bar counted them
    lines += [f"  failed: {f['error']}" for f in out["failed"]]
    # The policy's cost, then the modelled recording it is set against, then the bill, labelled as such.
    width = min(90, max([len("policy"), *(len(p["policy"]) for p in out["policies"])]))  # labels whole: they say what caching means
    header = (
        f"{'policy':<{width}} {'requests':>8} {'refused':>7} {'over':>5} {'folds':>6} {'rewrites':>8} "
        f"{'read share':>10} {'cost':>14} {'vs recorded':>11} {'recorded, modelled':>18} {'bill':>11}"
    )
    lines += ["", header]
    for p in out["policies"]:
        vs = "n/a" if p["cost_vs_recorded"] is None else f"{p['cost_vs_recorded']:.3f}x"
        cost = "not comparable" if p.get("cost_not_comparable") else _usd(p["cost_usd"])
        lines.append(
            f"{p['policy'][:width]:<{width}} {p['requests']:>8,} {p['refused']:>7,} {p['over_ceiling']:>5,} "
            f"{p['folds']:>6,} {p['rewrites']:>8,} {p['cache_read_share']:>10.1%} {cost:>14} "
            f"{vs:>11} {_usd(p['recorded_modelled_cost_usd']):>18} {_usd(p['bill_usd']):>11}"
        )
    rec = out["recommendation"]
    lines += [
        "",
        "costs are modelled: set each against recorded, modelled (the recorded views under the same cache "
        "model); the bill is the recording as billed (reported usage priced), beside, never the baseline",
    ]
    lines += [f"{p['policy']}: cost {p['cost_not_comparable']}" for p in out["policies"] if p.get("cost_not_comparable")]
    # Without a ceiling a strategy never acts: its row is the recording's views, whatever its line and target say.
    lines += [
        f"{p['policy']}: no ceiling in {p['no_ceiling']:,} of {p['sessions']:,} sessions (none given, or auto on a "
        f"model with one flat price tier), so {p['strategy']} does not act there; give one with --ceiling N "
        "(`foldscope replay FILE` names each session's agent window and compaction point)"
        for p in out["policies"]
        if p.get("no_ceiling") and p.get("compact_at") is None
    ]
    lines += [
        f"{p['policy']}: no window known in {p['no_ceiling']:,} of {p['sessions']:,} sessions (no agent rule, file "
        "figure or price list gives one), so the agent's compaction does not act there"
        for p in out["policies"]
        if p.get("no_ceiling") and p.get("compact_at") is not None
    ]
    automatic = max((p.get("automatic_cache_sessions", 0) for p in out["policies"]), default=0)
    if automatic:
        lines.append(
            f"{plural(automatic, 'session')} of {num(out['sessions'])} ran on a provider that caches by itself (OpenAI's "
            "automatic cache): no marks placed by the policy there; the provider's own cache still reads, and the read "
            "share counts it"
        )
    lines += recommendation_lines(rec)
    lines += [f"wrote {w}" for w in out.get("written", [])]
    return "\n".join(lines)


def in_words(out: dict[str, Any]) -> dict[str, Any]:
    """The result with each policy's label as a person reads it (policy_words: "ceiling 100,000"), for the text;
    --json, the CSV and the Parquet keep the labels as they are, their keys."""
    from foldscope.core.readout.tune_facts import policy_words

    rec = dict(out["recommendation"])
    if rec.get("policy"):
        rec["policy"] = policy_words(rec["policy"])
    rec["ruled_out"] = [{**r, "policy": policy_words(r["policy"])} for r in rec.get("ruled_out") or []]
    return {**out, "policies": [{**p, "policy": policy_words(p["policy"])} for p in out["policies"]], "recommendation": rec}


def recommendation_lines(rec: Mapping[str, Any]) -> list[str]:
    """The recommendation, or why none: each policy with the sessions that rule it out, then the best policy for the
    rest; its saving and spread, the sessions where it did worse, and the settings to write. Counted in files, as the
    result's first line counts them: each file swept is a row, a subagent's file beside its session one of its own."""
    from foldscope.core.readout.tune_facts import settings_lines

    lines: list[str] = []
    ruled = rec.get("ruled_out") or []
    if ruled:
        lines.append("no policy is safe for every session; the sessions that rule each out (a request refused or sent over its ceiling):")
        lines += [f"  {r['policy']}: {_files(r['by'])}" for r in ruled]
    if rec["policy"] is None:
        lines.append(f"no recommendation: {rec['why']}")
        return lines
    if rec.get("for_every_session", True):
        lines.append(f"recommended: {rec['policy']} ({rec['why']})")
    else:
        lines.append(
            f"recommended: {rec['policy']}, for the other {plural(rec['sessions'], 'file')} (ruled out only by "
            f"{_files(rec.get('left_out', []))}, the fewest of any policy; the cheapest against the recording on the rest)"
        )
    saving = rec.get("saving")
    if saving:
        lines.append(
            f"  expected saving against the recording (modelled): {_usd(saving['usd'])} over {plural(saving['sessions'], 'file')}; "
            f"a file's saving {saving['median_share']:.1%} at the median, from {saving['least_share']:.1%} to {saving['most_share']:.1%}"
        )
    worse = rec.get("worse_sessions") or []
    lines.append(
        f"  worse than the recording in {plural(len(worse), 'file')}: {_files(worse)}" if worse else "  worse than the recording in no file"
    )
    lines += [f"  {line}" for line in settings_lines(rec.get("settings", []))]
    return lines


def _files(paths: Sequence[str]) -> str:
    names = [Path(p.split("?")[0]).name for p in paths]
    return ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
