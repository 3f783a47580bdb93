"""Every command imports every reader, so a reader imports what only its own files need (zipfile for an Inspect AI
archive, sqlite3 for an OpenCode database) when it opens one, and a damaged archive is still one clear line."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from foldscope.core import formats
from foldscope.core.model.session import ReadError


def test_the_readers_import_neither_zipfile_nor_sqlite3_until_a_file_needs_them():
    code = "import sys; import foldscope.core.formats; print(sorted({'zipfile', 'sqlite3'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"


def test_a_damaged_archive_met_while_reading_is_one_line_naming_the_file():
    with pytest.raises(ReadError, match="a damaged archive"):
        with formats._reading("run.eval"):
            raise zipfile.BadZipFile("Bad CRC-32")
