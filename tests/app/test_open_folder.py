"""A folder given to the window to open says what the window does with folders, in the one line it shows."""

from __future__ import annotations

import pytest

from foldscope.app.loader import FOLDER_WAYS, error_line
from foldscope.core.formats import check_file
from foldscope.core.model.session import ReadError


def test_a_folder_opened_in_the_window_says_file_open_and_the_tune_lab(tmp_path):
    with pytest.raises(ReadError) as refused:
        check_file(tmp_path)
    line = error_line(str(tmp_path), refused.value)
    assert line == f"{tmp_path}: is a folder, not a session file ({FOLDER_WAYS})"
    assert "File > Open" in line and "Lab > Tune" in line and "\n" not in line


def test_another_read_error_keeps_its_own_line(tmp_path):
    missing = tmp_path / "gone.jsonl"
    with pytest.raises(ReadError) as refused:
        check_file(missing)
    assert error_line(str(missing), refused.value) == str(refused.value)
