"""The README's "From Python" example runs as written."""

import re
import subprocess
import sys

from support import ROOT


def from_python_example():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "one python block in the README's From Python section"
    return blocks[0]


def test_the_readme_example_runs_as_written():
    example = from_python_example()
    run = subprocess.run([sys.executable, "-c", example], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    # What the comments in the example say it prints.
    for comment in re.findall(r"#\s*->\s*(.*)", example):
        assert comment.strip() in run.stdout, (comment, run.stdout)
