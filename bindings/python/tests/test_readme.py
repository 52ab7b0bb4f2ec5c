"""The README's "From Python" examples run as written (test_wheel.py runs them again from
the wheel installed in a fresh virtualenv)."""

import os
import pathlib
import re
import subprocess
import sys

from support import ROOT


def from_python_examples():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 2, "two python blocks in the README's From Python section: checks, planning"
    return blocks


def runs_as_written(example: str, python: str, cwd: pathlib.Path, env=None) -> None:
    """Runs a README block with `python` in `cwd`; it prints what its `# -> …` comments say."""
    run = subprocess.run([python, "-c", example], cwd=cwd, capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    for comment in re.findall(r"#\s*->\s*(.*)", example):
        assert comment.strip() in run.stdout, (comment, run.stdout)


def runs_the_planning_example(python: str, cwd: pathlib.Path, scripts: pathlib.Path) -> None:
    """The planning block against the scripted OpenAI-compatible provider, named by the
    variables the example reads."""
    from test_planner import LWIR, Provider

    served = Provider(scripts, {"turns": [{"toolCalls": [{"id": "s1", "name": "submit_lwir", "arguments": {"lwir": LWIR}}]}]})
    try:
        env = dict(os.environ, OPENAI_BASE_URL=served.base_url, OPENAI_API_KEY="sk-readme-0001")
        runs_as_written(from_python_examples()[1], python, cwd, env)
    finally:
        served.stop()


def test_the_readme_example_runs_as_written():
    runs_as_written(from_python_examples()[0], sys.executable, ROOT)


def test_the_readme_planning_example_runs_as_written(tmp_path):
    runs_the_planning_example(sys.executable, ROOT, tmp_path)
