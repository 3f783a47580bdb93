"""The GUI takes fold's, requests' and replay's policy flags (core.cli.options) and resolves them the same way."""

from __future__ import annotations

from foldscope.core.formats.demo import demo_path
from tests.core.cli.test_options import ceilings


def test_the_gui_takes_the_same_policy_flags_and_resolves_the_same_ceiling(capsys):
    from foldscope.app.gui import build_parser
    from foldscope.core.cli.options import POLICY_FLAGS, policy_choice
    from foldscope.core.formats import load_session
    from foldscope.core.readout.document import build_document

    parser = build_parser()
    assert set(POLICY_FLAGS) <= {a.dest for a in parser._actions}
    flags = ["--ceiling", "50000", "--per-call", "30000", "--no-caching"]
    document = build_document(load_session(demo_path()), str(demo_path()), policy=policy_choice(parser.parse_args(flags)))
    assert document.measure.ceiling == ceilings(capsys, demo_path(), flags)["requests"] == 30_000
    assert not document.policy.caching
