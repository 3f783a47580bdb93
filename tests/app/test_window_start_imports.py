"""The window's start imports only what its first look at a session needs: it comes before usable and complete."""

from __future__ import annotations

from tests.app.window_helpers import modules_at_the_window_s_start


def test_the_window_s_start_imports_no_package_metadata_no_yaml_and_no_compactions(tmp_path):
    # importlib.metadata (with email and csv: 0.03-0.04 s of CPU) only names the version in Help > About, yaml
    # (0.02 s) only reads and writes the policy editor's fields and profiles, and the compactions' module (with the
    # literal checks: 0.015 s) is first asked for by the Cost panel: each imported where it is used.
    unwanted = ("importlib.metadata", "yaml", "email", "foldscope.core.forensics.compactions", "foldscope.core.forensics.literals")
    assert modules_at_the_window_s_start(unwanted, tmp_path) == []


def test_about_still_names_the_version_and_the_editor_still_reads_and_writes_yaml(tmp_path):
    from foldscope.app.help_menu import about_text
    from foldscope.app.panels.policy_editor import parse_value, save_profile
    from foldscope.core.model.policy import Policy

    assert about_text(str(tmp_path / "lib.db")).startswith("foldscope ")
    assert parse_value("context_fold_target", "0.5") == 0.5
    save_profile(Policy.from_mapping({"context_fold_target": 0.5}, "test"), tmp_path / "p.yaml")
    assert "context_fold_target: 0.5" in (tmp_path / "p.yaml").read_text()
