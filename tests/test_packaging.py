"""The project installs as one package, foldscope: a wheel built from the tree holds nothing else at its top."""

import subprocess
import sys
import zipfile

from tests.paths import ROOT


def test_a_wheel_holds_exactly_one_top_level_package_foldscope(tmp_path):
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("foldscope-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"foldscope"}
    assert {
        "foldscope/__main__.py",
        "foldscope/core/request/count.py",
        "foldscope/app/window.py",
        "foldscope/resources/o200k_base.tiktoken",
    } <= set(names)
    assert not any(name.startswith(("foldscope/tests/", "foldscope/bench/")) for name in names)


def test_python_dash_m_foldscope_runs_the_same_entry_point():
    done = subprocess.run(
        [sys.executable, "-m", "foldscope", "count", "-"], input="hello world", capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().split()[0] == "2"
