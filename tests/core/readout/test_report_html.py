"""The report's HTML pieces (core.readout.report_html): a bar's rectangles."""

import random

from foldscope.core.readout.report_html import _painted, bar_svg


def test_a_bars_rectangles_kept_from_the_bar_before_are_the_ones_drawn_anew_a_scale_of_signed_zero_included():
    def anew(figures, window, estimate, scale, width=960, height=34):  # each rectangle as first written, none kept
        span, x, out = max(window or 0, estimate, 1), 1.0, []
        for name, tokens in figures:
            if tokens > 0:
                w = (width - 2) * tokens * scale / span
                colour, shown = _painted(name)
                out.append(
                    f'<rect x="{x:.2f}" y="1" width="{w:.2f}" height="{height - 2}" fill="{colour}">'
                    f"<title>{shown}: {tokens:,} tokens</title></rect>"
                )
                x += w
        return "".join(out) + "</svg>"

    rnd = random.Random(48)
    names = ["system and tools", "instructions", "tool results: Read", "unseen head: a <b>", "notes"]
    cases = [([("instructions", 5), ("notes", 3)], None, 10, scale) for scale in (0.0, -0.0, 0.0, 1.5, -1.5)]
    for _ in range(3000):
        figures = [(rnd.choice(names), rnd.choice((0, 1, 7, 999, 12_345, rnd.randint(-5, 200_000)))) for _ in range(rnd.randint(0, 6))]
        cases.append((figures, rnd.choice((None, 200_000)), rnd.randint(0, 300_000), rnd.choice((1.0, 1.7125, 0.0, -0.0))))
    for width, height in ((960, 34), (400, 14)):  # each width through every case in turn: a shape drawn again
        for figures, window, estimate, scale in cases:
            drawn = bar_svg(figures, window, estimate, scale, width=width, height=height)
            assert drawn.endswith(anew(figures, window, estimate, scale, width, height)), (figures, window, estimate, scale)
            assert drawn.count("<rect") == 1 + sum(1 for _, tokens in figures if tokens > 0)
