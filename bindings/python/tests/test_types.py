"""The types shipped in the wheel (py.typed, the TypedDicts, _native.pyi) hold."""

import re
import subprocess
import sys

from support import ROOT

HERE = ROOT / "bindings" / "python" / "tests"


def mypy(*args):
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--strict", *args],
        cwd=HERE,
        capture_output=True,
        text=True,
    )


def test_typed_usage_passes_mypy_strict():
    run = mypy("typed_usage.py")
    assert run.returncode == 0, run.stdout + run.stderr


def test_misuse_is_caught_by_mypy_line_by_line():
    run = mypy("typed_misuse.py")
    expected = {}
    for n, line in enumerate((HERE / "typed_misuse.py").read_text().splitlines(), 1):
        if "# E: " in line:
            expected[n] = line.split("# E: ", 1)[1]
    found = {}
    for line in run.stdout.splitlines():
        match = re.match(r"typed_misuse\.py:(\d+): error: (.*)", line)
        if match:
            found.setdefault(int(match.group(1)), []).append(match.group(2))
    assert set(found) == set(expected), run.stdout
    for n, message in expected.items():
        assert any(message in f for f in found[n]), (n, message, found[n])


def test_the_stubs_match_the_extension():
    # stubtest imports the installed package and compares every signature with the stubs.
    run = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "little_compiler._native"],
        cwd=HERE,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
