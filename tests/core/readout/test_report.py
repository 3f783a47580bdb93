"""The shared report: one self-contained HTML file that loads nothing and carries session text only escaped."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.model.policy import Policy
from foldscope.core.readout.report import CSP, gather, render
from tests.core.live_sessions import append, assistant, result, user

HOSTILE = [
    "<script>alert('x')</script>",
    '"><img src="https://evil.example/pixel.png" onerror="alert(1)">',
    "</svg><iframe src=//evil.example></iframe>",
    "<style>@import url(https://evil.example/a.css);</style>",
    '<a href="javascript:alert(1)">click</a>',
    "<link rel=stylesheet href=http://evil.example/b.css>",
]
# Attributes and tags through which a page loads something or runs code.
LOADING_ATTRIBUTES = {"src", "href", "srcset", "action", "formaction", "poster", "data", "xlink:href", "background", "ping"}
LOADING_TAGS = {"script", "link", "img", "iframe", "object", "embed", "base", "frame", "audio", "video", "source", "a", "form"}


class Loads(HTMLParser):
    """Every tag, attribute and style text of a page that could load something."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.metas: list[dict[str, str | None]] = []
        self.urls: list[str] = []  # every attribute value that holds a URL
        self.fragments: list[str] = []  # links within the page (#id)
        self.ids: set[str] = set()
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in LOADING_TAGS and not (tag == "a" and set(attributes) == {"href"} and (attributes["href"] or "").startswith("#")):
            self.found.append(f"<{tag}>")
        if "id" in attributes:
            self.ids.add(attributes["id"] or "")
        if tag == "meta":
            self.metas.append(attributes)
            if (attributes.get("http-equiv") or "").lower() == "refresh":
                self.found.append("meta refresh")
        for name, value in attrs:
            if value and "://" in value:
                self.urls.append(value)
            if tag == "a" and name == "href" and value and value.startswith("#"):
                self.fragments.append(value)  # a link within the page: it loads nothing
                continue
            if name in LOADING_ATTRIBUTES or name.startswith("on"):
                self.found.append(f"{tag} {name}={value}")
            if name == "style" and value and "url(" in value:
                self.found.append(f"{tag} style url(")
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style and ("url(" in data or "@import" in data):
            self.found.append("style url(")


def hostile_session(tmp_path: Path) -> Path:
    """A Claude Code session (the corpus's shape) whose every text field is markup an attacker chose."""
    path = tmp_path / "<b>session<i>.jsonl"
    lines = [user(0, HOSTILE[0] + " please look")]
    for n, text in enumerate(HOSTILE, start=1):
        lines += [assistant(n, text, tool=(f"t{n}", "Read", {"file_path": text})), result(n, f"t{n}", text * 20)]
    lines.append(assistant(99, HOSTILE[2]))
    append(path, lines)
    raw = path.read_text()
    path.write_text(raw.replace('"claude-sonnet-4-5"', json.dumps(HOSTILE[1])))
    return path


def test_the_report_names_no_external_url_to_load_and_carries_a_hostile_session_only_escaped(tmp_path):
    path = hostile_session(tmp_path)
    out = tmp_path / "report.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    loads = Loads()
    loads.feed(page)
    assert loads.found == []
    assert {"http-equiv": "Content-Security-Policy", "content": CSP} in loads.metas
    assert CSP.startswith("default-src 'none'")
    for text in HOSTILE:
        assert text not in page  # never as markup ...
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page  # ... only as text
    assert "&lt;b&gt;session&lt;i&gt;.jsonl" in page  # the file's own name too
    # The only URL in an attribute is the SVG namespace, which names a vocabulary and loads nothing.
    assert set(loads.urls) == {"http://www.w3.org/2000/svg"}


def test_the_report_shows_the_largest_request_and_parts_adding_up_to_it(corpus_dev):
    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    data = gather(session, Policy())
    rows = data.measure.trace.rows
    assert data.largest == max(rows, key=lambda r: r.count_with_head).index
    assert data.composition is not None and sum(p.tokens for p in data.composition.parts) == rows[data.largest].count_with_head
    page = render(data)
    row = rows[data.largest]
    assert (
        f"request {data.largest}</b>: count {row.count_with_head:,} tokens ({row.own_count:,} counted + an unseen head of {row.unseen_head:,})"
    ) in page
    assert page.count("<rect") >= len(rows)  # one bar per request, and the composition's segments
    titles = [s.title for s in data.sections]
    assert titles[:3] == ["Summary", "Timeline of requests", "What is eating the context"] and "Cost by cause" in titles


def test_the_bill_in_the_report_is_the_reported_usage_priced(corpus_dev):
    from foldscope.core.forensics.cache_report import cache_report

    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    bill = cache_report(session).totals()["bill_usd"]
    page = render(gather(session, Policy()))
    assert bill is not None and f"<b>${bill:,.4f}</b>" in page


def test_replay_adds_the_comparison_of_the_strategies_asked(tmp_path, corpus_dev, capsys):
    out = tmp_path / "r.html"
    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    assert main(["report", str(path), "-o", str(out), "--replay", "--strategy", "recorded,adr", "--json"]) == 0
    assert "Replay under other strategies" in json.loads(capsys.readouterr().out)["sections"]
    page = out.read_text()
    assert "<td>recorded, as billed</td>" in page and "<td>adr</td>" in page and "<td>band</td>" not in page


def test_a_report_that_cannot_be_written_is_one_clear_line(tmp_path, corpus_dev, capsys):
    path = corpus_dev / "claude_code" / "short.jsonl"
    assert main(["report", str(path), "-o", str(tmp_path / "missing" / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "cannot write the report" in err and err.count("\n") == 1


CHROMIUM = "/usr/bin/chromium"


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no Chromium at /usr/bin/chromium (Debian's `chromium` package)")
def test_the_report_renders_in_headless_chromium_with_no_console_error_and_no_network_request(tmp_path):
    path = hostile_session(tmp_path)
    out = tmp_path / "report.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    dom, console, requested = open_in_chromium(out, tmp_path)
    assert "foldscope report: &lt;b&gt;session&lt;i&gt;.jsonl" in dom and "<svg" in dom
    assert console == [] and requested == []


def test_the_browser_check_sees_a_page_that_loads_and_logs(tmp_path):
    """The check above can fail: a page that loads an image and logs an error is caught on both counts."""
    if not Path(CHROMIUM).exists():
        pytest.skip("no Chromium at /usr/bin/chromium (Debian's `chromium` package)")
    bad = tmp_path / "bad.html"
    bad.write_text('<!doctype html><h1>x</h1><img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script>')
    _, console, requested = open_in_chromium(bad, tmp_path)
    assert requested == ["http://127.0.0.1:9/x.png"] and any("boom" in line for line in console)


def open_in_chromium(page: Path, work: Path) -> tuple[str, list[str], list[str]]:
    """(the rendered DOM, console lines, URLs the page itself asked the network for) from one headless run.

    Chromium's own background requests (updates, accounts) are told apart from the page's by their network
    isolation key, which for a page opened from a file is file://.
    """
    net = work / "net.json"
    run = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-extensions",
            f"--user-data-dir={work / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            f"--log-net-log={net}",
            "--virtual-time-budget=3000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shutil.which(CHROMIUM) and run.returncode == 0, run.stderr[-2000:]
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    events = json.loads(net.read_text()).get("events", [])
    requested = sorted(
        {
            e["params"]["url"]
            for e in events
            if str(e.get("params", {}).get("network_isolation_key", "")).startswith("file://")
            and not e["params"].get("url", "file:").startswith(("file:", "data:"))
        }
    )
    return run.stdout, console, requested


def test_the_reports_timeline_draws_each_requests_predicted_input_as_requests_and_the_gui_do(corpus_dev, capsys):
    # One size for one request: the report's bars are the headline (predicted input), like the GUI's timeline and
    # the `requests` table; the estimate (count x scale) is named apart as what the ceiling is checked against.
    import re

    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    page = render(gather(load_session(path), Policy()))
    assert main(["requests", str(path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["requests"]
    drawn = [int(n.replace(",", "")) for n in re.findall(r"<title>request \d+: predicted input ([\d,]+)", page)]
    assert drawn == [r["predicted"] for r in rows]
    assert f"{max(r['predicted'] for r in rows):,}" in page.split("Largest predicted input", 1)[1][:80]


FLAT = "codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"  # gpt-5.3-codex: one flat tier


def test_the_report_replay_says_no_ceiling_lets_the_strategies_act_and_sets_the_modelled_recording_beside_the_bill(corpus_dev):
    """Issue 41, finding 3: the page's replay gives the CLI's notice and caveat, and the modelled recording's row."""
    from foldscope.core.readout.replay_facts import no_ceiling_line
    from foldscope.core.readout.report import esc, replay_section
    from foldscope.core.replay.lab import replay

    session = load_session(corpus_dev / FLAT)
    data = gather(session, Policy())
    strategies = ["recorded", "none", "adr"]
    body = replay_section(data, strategies).body
    notice = no_ceiling_line(data.measure, strategies, "--ceiling N (max_input_tokens)")
    assert data.measure.ceiling is None and notice and f"<p>{esc(notice)}</p>" in body
    recorded = replay(session, ["recorded"], data.measure)["totals"][0]
    cells = [row.split("</td>")[0] for row in body.split("<tr><td>")[1:]]
    assert cells == ["recorded, as billed", "recorded, modelled", "none", "adr"]
    billed_row, modelled_row = body.split("<tr><td>")[1:3]
    assert f"${recorded['cost_usd']:,.4f}</td></tr>" in billed_row
    assert f"${recorded['modelled_cost_usd']:,.4f}</td></tr>" in modelled_row
    assert "set them against recorded&#x27;s modelled cost" in body and "not its bill" in body


# Issue 41, finding 5: the summary said the unseen head "every request carried" was the latest stretch's (33,308)
# while its own composition of an earlier request showed that request's stretch's (50,809).
def test_the_summary_names_each_stretchs_unseen_head_and_the_composition_shows_its_requests(tmp_path):
    import re

    from foldscope.core.readout.unseen_heads import head_runs
    from tests.core.forensics.traces import write_claude_code

    session = load_session(write_claude_code(tmp_path))  # a compaction before its third request
    data = gather(session, Policy())
    heads = [r.unseen_head for r in data.measure.trace.rows]
    assert len(set(heads)) == 2 and all(heads)  # the stretch before the compaction and the one after it
    c = data.composition
    assert c is not None and c.unseen_head == heads[c.request]
    page = render(data)
    summary = re.search(r"<dt>Unseen head</dt><dd>(.*?)</dd>", page).group(1)
    assert "every request" not in summary and "per stretch between compactions" in summary
    for first, last, head in head_runs(heads):
        span = f"request {first}" if first == last else f"requests {first}–{last}"
        assert f"{head:,} tokens for {span}" in summary, summary
    assert f"unseen head of {c.unseen_head:,}" in page  # the composition's, as its stretch carried it


# Issue 45, "A report worth sending".
WITH_CHILDREN = "claude_code/tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"


def test_the_composition_bar_has_a_legend_and_the_category_table_swatches_in_the_bars_colours(corpus_dev):
    import re

    from foldscope.core.readout.report_html import part_colour

    data = gather(load_session(corpus_dev / "claude_code" / "session-196820da.jsonl"), Policy())
    body = next(s.body for s in data.sections if s.title == "What is eating the context")
    legend = body.split("<p class='legend keys'>", 1)[1].split("</p>", 1)[0]
    table = body.split("<table>", 1)[1].split("</table>", 1)[0]
    drawn = [p for p in data.composition.parts if p.tokens > 0]
    for part in drawn:
        swatch = f"<span class=swatch style='background:{part_colour(part.name)}'></span>"
        assert f"{swatch}{part.name} {part.tokens:,}" in legend  # named beside its colour, readable on paper
        assert f"<td>{swatch}{part.name}</td>" in table
        # and the bar draws it in that colour
        assert re.search(rf'fill="{part_colour(part.name)}"><title>{re.escape(part.name)}:', body)


def test_the_reports_total_is_inspects_with_the_subagents_and_each_part_is_explained(corpus_dev, capsys):
    path = corpus_dev / WITH_CHILDREN
    assert main(["inspect", str(path), "--json"]) == 0
    inspected = json.loads(capsys.readouterr().out)["usage"]
    page = render(gather(load_session(path), Policy()))
    cost = page.split("<h2>Cost by cause</h2>", 1)[1].split("</section>", 1)[0]
    total = f"${inspected['total']['cost_usd']:,.4f}"
    assert inspected["subagents"]["requests"] and f"<td><b>total</b></td><td class=n></td><td class=n><b>{total}</b>" in cost
    assert f"${inspected['main']['cost_usd']:,.4f}" in cost and total != f"${inspected['main']['cost_usd']:,.4f}"
    assert "subagents</td>" in cost and "the helper sessions this one started" in cost
    assert "<th>What it is</th>" in cost and "read back from the cache at a fraction of the price" in cost


def test_the_summary_says_when_how_long_where_and_which_agent_release(corpus_dev):
    import re

    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    page = render(gather(load_session(path), Policy()))
    facts = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", page))
    assert facts["Date"].startswith("2026-01-08 20:53 UTC to 2026-01-08 21:38 UTC")
    assert facts["Duration"].startswith("45 min")
    assert facts["Project"] == next(e["cwd"] for e in lines if "cwd" in e)
    # review11: the page named the agent by its reader ("claude_code", "copilot_cli"), where the window's status bar
    # and `sessions` name it as a person does
    assert facts["Agent version"] == f"Claude Code {next(e['version'] for e in lines if 'version' in e)}"
    assert facts["Format"] == "Claude Code"


def test_the_conversation_is_there_folded_and_every_link_stays_on_the_page(corpus_dev):
    from foldscope.core.readout.report import esc

    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    data = gather(session, Policy())
    page = render(data)
    convo = page.split("<h2>The conversation</h2>", 1)[1]
    assert "<details class=transcript><summary>The conversation (193 messages)</summary>" in convo
    for index, m in enumerate(session.record):
        assert f"id=message-{index}>" in convo
        assert esc(m.text[:200]) in convo  # every message's text, escaped
        if m.kind in ("action_request", "action_response"):  # folded under a line with its size
            item = convo.split(f"id=message-{index}>", 1)[1][:400]
            assert item.startswith("<details><summary>") and f"{len(m.text):,} character" in item
    # every request is marked where it was sent, linking to its composition; every link lands on this page
    loads = Loads()
    loads.feed(page)
    assert loads.found == []
    for k in range(len(session.trace)):
        assert f"request {k} sent" in convo and f"#request-{k}" in loads.fragments
    assert loads.fragments and all(f[1:] in loads.ids for f in loads.fragments)
    timeline = page.split("<h2>Timeline of requests</h2>", 1)[1].split("</section>", 1)[0]
    assert timeline.count('<a href="#request-') == len(session.trace)


def test_compactions_and_folds_are_marked_in_the_conversation_where_they_happened(tmp_path):
    from tests.core.forensics.traces import write_claude_code

    session = load_session(write_claude_code(tmp_path))  # a compaction before its third request
    data = gather(session, Policy())
    assert data.events
    convo = render(data).split("<h2>The conversation</h2>", 1)[1]
    for index, m in enumerate(session.record):
        if m.kind == "note":
            item = convo.split(f"id=message-{index}>", 1)[0].rsplit("<li", 1)[1]
            assert "mark compaction" in item
    assert convo.count("<b>Compaction</b>") == sum(1 for _, kind in data.events if kind == "compaction")


def test_the_replay_states_its_ceiling_in_a_sentence_and_tables_do_not_break_words(corpus_dev):
    from foldscope.core.readout.report import STYLE, replay_section

    data = gather(load_session(corpus_dev / FLAT), Policy())
    body = replay_section(data, ["recorded", "adr"]).body
    assert "Ceiling —" not in body and "No ceiling is set (" in body
    assert "overflow-wrap:anywhere" not in STYLE.split(".msgs pre", 1)[0]  # only the transcript's long lines may


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no Chromium at /usr/bin/chromium (Debian's `chromium` package)")
def test_in_chromium_the_report_shows_legend_total_and_conversation_and_prints_them(tmp_path, corpus_dev, capsys):
    path = corpus_dev / WITH_CHILDREN
    assert main(["inspect", str(path), "--json"]) == 0
    total = f"${json.loads(capsys.readouterr().out)['usage']['total']['cost_usd']:,.4f}"
    out = tmp_path / "report.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    dom, console, requested = open_in_chromium(out, tmp_path)
    assert "legend keys" in dom and f"<b>{total}</b>" in dom and "The conversation (" in dom
    assert console == [] and requested == []
    pdf = tmp_path / "report.pdf"
    run = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
            f"--user-data-dir={tmp_path / 'print'}",
            f"--print-to-pdf={pdf}",
            out.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0 and pdf.read_bytes().startswith(b"%PDF") and pdf.stat().st_size > 20_000


@pytest.mark.parametrize(
    "name", ["claude_code/session-196820da.jsonl", "claude_code/extracted-dd381a75.jsonl", "codex", "pi/pi-mono_large-session.jsonl"]
)
def test_the_cost_sections_made_from_the_trace_count_are_the_ones_counting_again_gives(corpus_dev, name):
    """gather lets the cache causes' pass ride on the trace's count; a measure counted before gather leaves it
    nothing to hear, so its cost sections count every request again: the two pages' sections are the same."""
    from foldscope.core.request.measure import Measure

    path = corpus_dev / name if name != "codex" else sorted((corpus_dev / "codex").glob("*.jsonl"))[0]
    ridden = gather(load_session(path))
    assert ridden.cache_pass is not None and len(ridden.cache_pass.rows) == len(ridden.session.trace) > 0
    session = load_session(path)
    counted = Measure(session, Policy())
    counted.calibrate()  # counted before gather: nothing for the pass to hear
    again = gather(session, measure=counted)
    assert len(again.cache_pass.rows) == 0
    assert [(s.title, s.body) for s in ridden.sections] == [(s.title, s.body) for s in again.sections]
    assert any(s.title == "Cost by cause" and "Not available" not in s.body for s in ridden.sections)


@pytest.mark.parametrize(
    "name", ["claude_code/session-196820da.jsonl", "claude_code/extracted-dd381a75.jsonl", "codex", "pi/pi-mono_large-session.jsonl"]
)
def test_every_request_bar_heard_from_the_trace_count_is_the_one_measuring_it_again_gives(corpus_dev, name):
    """The every-request section composes each bar from the parts the trace's count heard (core.readout.report_bars);
    a measure counted before gather leaves nothing to hear, and each request is measured again: the same rows."""
    from foldscope.core.request.measure import Measure

    path = corpus_dev / name if name != "codex" else sorted((corpus_dev / "codex").glob("*.jsonl"))[0]
    heard = gather(load_session(path))
    assert heard.bars is not None and len(heard.bars) == len(heard.session.trace) > 0
    session = load_session(path)
    counted = Measure(session, Policy())
    counted.calibrate()
    again = gather(session, measure=counted)
    assert again.bars is None

    def rows(data):
        return next(s.body for s in data.sections if s.title == "Every request")

    assert rows(heard) == rows(again) and rows(heard).count("<tr id=request-") == len(session.trace)


def test_the_written_report_is_the_rendered_page_written_a_block_at_a_time_never_whole(corpus_dev, tmp_path, monkeypatch):
    """The page is written as it is made (issue 48: a long session's page held whole was most of the report's
    memory): blocks of about the block size, the file byte for byte the page render() makes."""
    import os

    import foldscope.core.model.files as files
    import foldscope.core.readout.report as report
    import foldscope.core.readout.report_transcript as transcript

    session = load_session(corpus_dev / "claude_code" / "session-196820da.jsonl")
    writes: list[int] = []
    real_write = os.write
    monkeypatch.setattr(files.os, "write", lambda fd, data: writes.append(len(data)) or real_write(fd, data))
    monkeypatch.setattr(report._encoded, "__defaults__", (4096,))
    # a piece of the page a message or a row, as each was before a forked child made them a segment at a time
    monkeypatch.setattr(transcript, "MESSAGES_A_JOB", 1)
    monkeypatch.setattr(transcript, "ROWS_A_JOB", 1)
    out = tmp_path / "r.html"
    data = report.write_report(session, out, Policy())
    page = render(data).encode("utf-8")
    footer = page.rindex(b"<footer>")  # the footer says the minute it was made
    assert out.read_bytes()[:footer] == page[:footer] and len(out.read_bytes()) == len(page)
    assert len(writes) > 10 and max(writes) < 4096 + 8 * 4000 + 1000  # a block: the size, then at most one more piece


def test_a_report_that_fails_while_being_written_leaves_the_file_it_would_have_replaced(corpus_dev, tmp_path, monkeypatch):
    import foldscope.core.readout.report as report
    import foldscope.core.readout.report_transcript as transcript

    out = tmp_path / "r.html"
    out.write_text("the old report")
    made = transcript.message_item
    calls: list[int] = []

    def broken(*args):
        calls.append(1)
        if len(calls) > 20:  # blocks of the page are written by now
            raise RuntimeError("made to fail half way")
        return made(*args)

    monkeypatch.setattr(transcript, "message_item", broken)
    monkeypatch.setattr(report._encoded, "__defaults__", (256,))
    with pytest.raises(RuntimeError):
        report.write_report(load_session(corpus_dev / "claude_code" / "session-196820da.jsonl"), out, Policy())
    assert out.read_text() == "the old report" and [p.name for p in tmp_path.iterdir()] == ["r.html"]
