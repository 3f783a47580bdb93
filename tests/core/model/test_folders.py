"""The folders foldscope keeps come from platformdirs (the environment variables still override), and are private."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import platformdirs

from foldscope.core.model import folders
from foldscope.core.request.vocabulary import cache_folder


def test_each_folder_is_the_platforms_unless_the_environment_says_otherwise(tmp_path, monkeypatch):
    monkeypatch.delenv("FOLDSCOPE_CACHE", raising=False)
    monkeypatch.delenv("FOLDSCOPE_CONFIG", raising=False)
    assert folders.data_folder() == Path(platformdirs.user_data_dir("foldscope", appauthor=False))
    assert folders.cache_folder() == cache_folder() == Path(platformdirs.user_cache_dir("foldscope", appauthor=False))
    assert folders.config_folder() == Path(platformdirs.user_config_dir("foldscope", appauthor=False))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # Linux: platformdirs honours XDG
    assert folders.data_folder() == tmp_path / "data" / "foldscope"
    monkeypatch.setenv("FOLDSCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FOLDSCOPE_CONFIG", str(tmp_path / "config"))
    assert cache_folder() == tmp_path / "cache" and folders.config_folder() == tmp_path / "config"


def test_a_folder_foldscope_makes_is_private_and_a_users_folder_keeps_its_mode(tmp_path):
    old = os.umask(0o022)
    try:
        made = folders.make_private_folder(tmp_path / "a" / "b")
        assert stat.S_IMODE(made.stat().st_mode) == 0o700
        mine = tmp_path / "mine"
        mine.mkdir(mode=0o755)
        folders.make_private_folder(mine)
        assert stat.S_IMODE(mine.stat().st_mode) == 0o755  # chosen by the user (--db there): left as it is
        ours = tmp_path / "foldscope"
        ours.mkdir(mode=0o755)
        folders.make_private_folder(ours)
        assert stat.S_IMODE(ours.stat().st_mode) == 0o700  # the data folder an older foldscope made 0755
    finally:
        os.umask(old)


def test_the_cache_config_and_prices_folders_are_platformdirs_without_importing_it(tmp_path, monkeypatch):
    import subprocess
    import sys

    from foldscope.core.model import pricing

    monkeypatch.delenv("FOLDSCOPE_CACHE", raising=False)
    monkeypatch.delenv("FOLDSCOPE_CONFIG", raising=False)
    for xdg in (str(tmp_path / "xdg"), "relative/xdg", "", None):
        for home in (str(tmp_path / "home"), None):
            for variable in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
                if xdg is None:
                    monkeypatch.delenv(variable, raising=False)
                else:
                    monkeypatch.setenv(variable, xdg)
            if home is not None:
                monkeypatch.setenv("HOME", home)
            seen = (xdg, home)
            assert folders.cache_folder() == Path(platformdirs.user_cache_dir("foldscope", appauthor=False)), seen
            assert folders.config_folder() == Path(platformdirs.user_config_dir("foldscope", appauthor=False)), seen
            assert pricing.user_file() == Path(platformdirs.user_config_dir("foldscope")) / pricing.USER_FILE, seen
    code = "import sys; from foldscope.core.model import folders; folders.cache_folder(); print('platformdirs' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == ("False" if sys.platform.startswith("linux") else "True")
