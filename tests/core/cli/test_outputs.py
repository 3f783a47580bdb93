"""Every file foldscope writes where a user names it: never over a device, a link or a file it read; private when new."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats.demo import demo_path
from foldscope.core.model.outputs import write_output
from foldscope.core.model.session import ReadError

COMMANDS_WITH_OUTPUT = {
    "export": lambda src, out: ["export", src, "-o", out],
    "report": lambda src, out: ["report", src, "-o", out],
    "fold --apply": lambda src, out: ["fold", src, "--ceiling", "2000", "--apply", "-o", out],
}


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    copy = tmp_path / "session.json"
    copy.write_bytes(Path(demo_path()).read_bytes())
    return copy


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def device(tmp_path: Path) -> Path:
    """A named pipe stands for a device: not a regular file, and safe to make (a bug here never replaces /dev/null)."""
    pipe = tmp_path / "device"
    os.mkfifo(pipe)
    return pipe


def test_an_output_that_is_a_device_is_refused_and_left_a_device(device):
    with pytest.raises(ReadError, match="not a regular file"):
        write_output(device, b"x")
    assert stat.S_ISFIFO(os.stat(device).st_mode)


def test_an_output_that_is_a_folder_is_refused(tmp_path):
    with pytest.raises(ReadError, match="folder, not a regular file"):
        write_output(tmp_path, b"x")


@pytest.mark.parametrize("command", list(COMMANDS_WITH_OUTPUT))
def test_every_command_refuses_a_device_as_its_output_in_one_line(command, session_file, device, capsys):
    assert main(COMMANDS_WITH_OUTPUT[command](str(session_file), str(device))) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a regular file" in err
    assert stat.S_ISFIFO(os.stat(device).st_mode)


@pytest.mark.parametrize("command", list(COMMANDS_WITH_OUTPUT))
def test_a_symlinked_output_is_written_through_to_its_target_and_stays_a_link(command, session_file, tmp_path):
    target = tmp_path / "elsewhere" / "real.out"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "link.out"
    link.symlink_to(target)
    assert main(COMMANDS_WITH_OUTPUT[command](str(session_file), str(link))) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() != "old" and target.stat().st_size > 100
    assert sorted(p.name for p in target.parent.iterdir()) == ["real.out"]  # no temporary left beside it


@pytest.mark.parametrize("command", list(COMMANDS_WITH_OUTPUT))
def test_every_command_refuses_to_overwrite_the_session_it_read(command, session_file, capsys):
    before = session_file.read_bytes()
    assert main(COMMANDS_WITH_OUTPUT[command](str(session_file), str(session_file))) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert session_file.read_bytes() == before


@pytest.mark.parametrize("command", list(COMMANDS_WITH_OUTPUT))
def test_a_link_to_the_session_is_the_session(command, session_file, tmp_path, capsys):
    link = tmp_path / "another-name.html"
    link.symlink_to(session_file)
    before = session_file.read_bytes()
    assert main(COMMANDS_WITH_OUTPUT[command](str(session_file), str(link))) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert session_file.read_bytes() == before and link.is_symlink()


def test_a_hard_link_to_the_session_is_refused_by_device_and_inode(session_file, tmp_path, capsys):
    hard = tmp_path / "hard.html"
    os.link(session_file, hard)
    before = session_file.read_bytes()
    assert main(["report", str(session_file), "-o", str(hard)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert session_file.read_bytes() == before


@pytest.mark.parametrize("command", list(COMMANDS_WITH_OUTPUT))
def test_what_foldscope_writes_is_private_when_new(command, session_file, tmp_path):
    out = tmp_path / "new.out"
    os.umask(0o022)
    assert main(COMMANDS_WITH_OUTPUT[command](str(session_file), str(out))) == 0
    assert _mode(out) == 0o600


def test_a_replaced_file_keeps_the_wider_permissions_the_user_chose(session_file, tmp_path):
    out = tmp_path / "shared.html"
    out.write_text("old")
    out.chmod(0o644)
    assert main(["report", str(session_file), "-o", str(out)]) == 0
    assert _mode(out) == 0o644 and out.read_text() != "old"


def test_tune_refuses_an_output_that_is_one_of_the_swept_sessions(tmp_path, capsys):
    folder = tmp_path / "sessions"
    folder.mkdir()
    swept = folder / "OUT.json"
    swept.write_bytes(Path(demo_path()).read_bytes())
    before = swept.read_bytes()
    code = main(["tune", str(folder), "--ceiling", "3000", "-o", str(folder / "OUT"), "--engine", "local", "--workers", "1"])
    assert code == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert swept.read_bytes() == before
    assert not (folder / "OUT.csv").exists()  # every output is checked before any is written


def test_tune_outputs_are_private(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "a.json").write_bytes(Path(demo_path()).read_bytes())
    assert main(["tune", str(folder), "--ceiling", "3000", "-o", str(tmp_path / "OUT"), "--engine", "local", "--workers", "1"]) == 0
    for name in ("OUT.csv", "OUT.json"):
        assert _mode(tmp_path / name) == 0o600
    assert json.loads((tmp_path / "OUT.json").read_text())["policies"]


@pytest.mark.parametrize("command", ["restore", "clip", "evict"])
def test_an_action_writing_over_the_run_manifest_says_one_line(command, tmp_path, capsys):
    from tests.core.formats.test_save_files import bare_branch_with_manifest

    branch, manifest = bare_branch_with_manifest(tmp_path)
    before = manifest.read_bytes()
    # indices in the demo: 3 and 4 are a folded call and its result, 13 a result in the view
    extra = {"restore": ["--index", "3"], "clip": ["--index", "13", "--keep", "100"], "evict": ["--index", "13"]}[command]
    assert main([command, str(branch), *extra, "-o", str(manifest)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refusing to overwrite the run manifest" in err, err
    assert manifest.read_bytes() == before


def test_export_to_standard_output_writes_the_file_there_and_says_the_rest_on_stderr(session_file, capsys):
    assert main(["export", str(session_file), "-o", "-"]) == 0
    captured = capsys.readouterr()
    assert "branch" in json.loads(captured.out)
    assert "output" in captured.err
