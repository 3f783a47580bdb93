"""Accuracy benchmark: our sizes against what the provider reported, over the dev corpus, per format.

Run: .venv/bin/python bench/bench_accuracy.py [CORPUS_DIR]     (--heads: print resources/unseen_heads.json from it)
With the default CORPUS_DIR (corpus/dev), the formats of issue 43 that hold requests and per-request usage (Cline,
Gemini CLI, Qwen Code, OpenCode) are read from corpus/staged/ and corpus/dev/ too (NEW_FORMATS), a row each.
Prints, per format, the median and p90 of |predicted/reported - 1| (predicted input, core.request.predict) and of
|estimate/reported - 1| (the ADR estimate, count times scale) on requests that have an anchor (an earlier report
in the same stretch), the trivial baseline (the previous request's reported/counted ratio times this count) on the
same requests, the first requests of a stretch apart, and the recorded replay's cost against the bill (the reported
usage priced per request). Sessions whose usage is hand-written (core.readout.accuracy.provider_usage) are left out.
Files whose text was sanitised (a message names unseen text, core.model.unseen_text: the dev corpus's Codex 019c8*
files) are also pooled apart, as "FORMAT sanitised", beside the whole files ("FORMAT whole"); `paired p90` is the
predicted input's on the requests the trivial baseline sizes too, the one to read beside `trivial p90`.

A session's first requests (before its first report) are shown three ways: the count alone (before the head table),
with the shipped head table (core.request.head_priors; measured on this same corpus, so optimistic here), and leave one
out (the head learned from the corpus's *other* sessions of the same agent and model): the no-hindsight figure.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foldscope.core.formats import load_session  # noqa: E402
from foldscope.core.model.pricing import lookup_prices, normalise  # noqa: E402
from foldscope.core.model.session import ReadError, Session  # noqa: E402
from foldscope.core.model.unseen_text import has_unseen  # noqa: E402
from foldscope.core.readout.accuracy import Accuracy, Errors, accuracy, provider_usage  # noqa: E402
from foldscope.core.replay.lab import replay_runs  # noqa: E402
from foldscope.core.request.measure import Measure  # noqa: E402
from foldscope.core.request.trace_measure import measure_trace  # noqa: E402

FORMATS = ("claude_code", "codex", "pi")
# The formats of issue 43 whose files hold the requests and per-request usage, each with where its sessions are in
# the corpus (staged/<folder>/ until they join dev/<format>/): a Cline task is its folder, an OpenCode session its
# session file in the storage layout, a Gemini CLI or Qwen Code chat its file (Gemini's recorded API responses are no
# session). Copilot CLI (usage totals only) and Aider (no requests) cannot be measured so.
NEW_FORMATS = {
    "cline": ("cline", "*"),
    "gemini_cli": ("gemini-cli", "*.json*"),
    "qwen_code": ("qwen-code", "*.jsonl"),
    "opencode": ("opencode", "*/session/*/*.json"),
}


def sessions(root: Path) -> list[Session]:
    out = []
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        try:
            out.append(load_session(str(path)))
        except ReadError:
            continue
    return out


def new_paths(corpus: Path) -> list[Path]:
    """The new formats' sessions under corpus/staged/ and corpus/dev/ (never eval/), each once."""
    out = []
    for fmt, (staged, pattern) in NEW_FORMATS.items():
        for folder in (corpus / "staged" / staged, corpus / "dev" / fmt):
            for path in sorted(folder.glob(pattern)):
                if path.name.endswith(".responses.jsonl") or path.name == "PROVENANCE.md":
                    continue
                if fmt == "cline" and not path.is_dir():
                    continue
                out.append(path)
    return out


def new_sessions(corpus: Path) -> list[Session]:
    out = []
    for path in new_paths(corpus):
        try:
            out.append(load_session(str(path)))
        except ReadError as exc:
            print(f"skipped {exc}", file=sys.stderr)
    return out


def pct(value: float | None) -> str:
    return "    -" if value is None else f"{value * 100:5.2f}%"


def bill(session: Session) -> float | None:
    total = 0.0
    for r in session.trace:
        if r.usage is None:
            continue
        prices = lookup_prices(r.model or session.model)
        if prices is None:
            return None
        u = r.usage
        total += prices.cost(u.input, u.cache_read, u.cache_write - u.cache_write_1h, u.cache_write_1h, u.output)
    return total


def first_gaps(session: Session, report) -> list[tuple[int, int, int | None]]:
    """The session's first requests (unanchored, up to and including its first report): (count part of the
    prediction, reported input or None, the head the prediction added)."""
    out = []
    for row in report.rows:
        if row.predicted_from != "count":
            break
        head = row.prediction.head if row.prediction is not None else 0
        out.append((row.predicted - head, row.reported_input or None, head))
        if row.reported_input:
            break
    return out


def model_key(session: Session, report) -> str:
    model = next((r.model for r in report.rows if r.model), None) or session.model or ""
    return normalise(model) if model else ""


def heads_table(firsts: list[tuple[str, str, str, int]]) -> dict:
    """resources/unseen_heads.json: per agent and model, the median first gap (reported input less its count)."""
    agents: dict = {}
    for fmt in FORMATS:
        gaps = [g for f, _, _, g in firsts if f == fmt]
        if not gaps:
            continue
        models = {}
        for model in sorted({m for f, m, _, _ in firsts if f == fmt and m}):
            mg = [g for f, m, _, g in firsts if f == fmt and m == model]
            models[model] = {"tokens": statistics.median_low(mg), "sessions": len(mg)}
        agents[fmt] = {"tokens": statistics.median_low(gaps), "sessions": len(gaps), "models": models}
    return {
        "about": "The head (system prompt and tools) each agent sends that its session file does not hold, "
        "added to a session's first requests until its own first report measures it (core.request.head_priors).",
        "source": "foldscope dev corpus: the low median of each session's first reported input less its count "
        "(bench/bench_accuracy.py --heads)",
        "agents": agents,
    }


def leave_one_out(firsts: list[tuple[str, str, str, int]], fmt: str, model: str, name: str) -> int:
    """The head learned from the other sessions: same agent and model, else same agent, else none."""
    same = [g for f, m, n, g in firsts if f == fmt and m == model and n != name]
    agent = [g for f, _, n, g in firsts if f == fmt and n != name]
    found = same or agent
    return statistics.median_low(found) if found else 0


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = Path(args[0]) if args else Path(__file__).resolve().parent.parent.parent / "shared/corpus/dev"
    pools: dict[str, Accuracy] = {}
    costs: dict[str, list[float]] = {}
    firsts: list[tuple[str, str, str, int]] = []  # (format, model, file, first gap)
    first_rows: list[tuple[str, str, str, int, int, int]] = []  # (format, model, file, count part, reported, head)
    found_new = new_sessions(root.parent) if root.name == "dev" else []
    for session in sessions(root) + found_new:
        if session.format not in FORMATS + tuple(NEW_FORMATS) or not any(r.usage for r in session.trace):
            continue
        report = measure_trace(session, prefix=False)
        if not provider_usage(session, report):
            continue
        name, model = str(session.source), model_key(session, report)
        for count, reported, head in first_gaps(session, report):
            if reported:
                if "EXCERPT" not in name:  # an excerpt starts mid-session: its first request is no session's first
                    firsts.append((session.format, model, name, reported - count))
                first_rows.append((session.format, model, name, count, reported, head))
        found = accuracy(session, report)
        pools.setdefault(session.format, Accuracy()).extend(found)
        apart = f"{session.format} {'sanitised' if has_unseen(session.record) else 'whole'}"
        pools.setdefault(apart, Accuracy()).extend(found)
        run = replay_runs(session, ["recorded"], Measure(session)).runs[0].totals()
        billed = bill(session)
        entry = costs.setdefault(session.format, [0.0, 0.0, 0.0])
        if run["cost_usd"] is not None and billed is not None:
            entry[0] += run["cost_usd"]
            entry[1] += billed
            entry[2] += run["modelled_cost_usd"] or 0.0
    print(
        f"{'format':<18} {'n':>4}  {'predicted p50':>13} {'p90':>7} {'paired p90':>10}  {'trivial p50':>11} {'p90':>7}  "
        f"{'estimate p50':>12} {'p90':>7}  {'first n':>7} {'pred p50':>8} {'est p50':>8}"
    )
    for fmt in [f"{f}{part}" for f in FORMATS for part in ("", " whole", " sanitised")] + list(NEW_FORMATS):
        a = pools.get(fmt)
        if a is None or (fmt.endswith(" whole") and fmt.split()[0] + " sanitised" not in pools):
            continue  # a format with no sanitised file: its whole files are its row already
        print(
            f"{fmt:<18} {len(a.predicted.values):>4}  {pct(a.predicted.median):>13} {pct(a.predicted.p90):>7} "
            f"{pct(a.paired.p90):>10}  {pct(a.trivial.median):>11} {pct(a.trivial.p90):>7}  "
            f"{pct(a.estimate.median):>12} {pct(a.estimate.p90):>7}  "
            f"{len(a.first_predicted.values):>7} {pct(a.first_predicted.median):>8} {pct(a.first_estimate.median):>8}"
        )
    if "--heads" in sys.argv:
        print(json.dumps(heads_table(firsts), indent=2))
        return
    print()
    print("a session's first reported request (no anchor): |size/reported - 1|, median and p90")
    print(f"{'format':<12} {'n':>3}  {'count alone':>11} {'p90':>7}  {'head table':>10} {'p90':>7}  {'leave one out':>13} {'p90':>7}")
    for fmt in FORMATS + tuple(NEW_FORMATS):
        rows = [r for r in first_rows if r[0] == fmt]
        if not rows:
            continue
        alone, table, loo = Errors(), Errors(), Errors()
        for _, model, name, count, reported, head in rows:
            alone.add(count, reported)
            table.add(count + head, reported)
            loo.add(count + leave_one_out(firsts, fmt, model, name), reported)
        print(
            f"{fmt:<12} {len(rows):>3}  {pct(alone.median):>11} {pct(alone.p90):>7}  {pct(table.median):>10} "
            f"{pct(table.p90):>7}  {pct(loo.median):>13} {pct(loo.p90):>7}"
        )
    print()
    print(f"{'format':<12} {'recorded cost':>14} {'the bill':>12} {'modelled':>12}")
    for fmt, (recorded, billed, modelled) in costs.items():
        print(f"{fmt:<12} {recorded:>14.4f} {billed:>12.4f} {modelled:>12.4f}")


if __name__ == "__main__":
    main()
