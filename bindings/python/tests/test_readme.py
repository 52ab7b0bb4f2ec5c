"""The README's "From Python" example runs as written."""

import os
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


def test_the_readme_example_runs_as_written():
    example = from_python_examples()[0]
    run = subprocess.run([sys.executable, "-c", example], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    # What the comments in the example say it prints.
    for comment in re.findall(r"#\s*->\s*(.*)", example):
        assert comment.strip() in run.stdout, (comment, run.stdout)


def test_the_readme_planning_example_runs_as_written(tmp_path):
    """Against the scripted OpenAI-compatible provider, named by the variables the example reads."""
    from test_planner import LWIR, Provider

    example = from_python_examples()[1]
    served = Provider(tmp_path, {"turns": [{"toolCalls": [{"id": "s1", "name": "submit_lwir", "arguments": {"lwir": LWIR}}]}]})
    try:
        env = dict(os.environ, OPENAI_BASE_URL=served.base_url, OPENAI_API_KEY="sk-readme-0001")
        run = subprocess.run([sys.executable, "-c", example], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    finally:
        served.stop()
    assert run.returncode == 0, run.stderr
    for comment in re.findall(r"#\s*->\s*(.*)", example):
        assert comment.strip() in run.stdout, (comment, run.stdout)
