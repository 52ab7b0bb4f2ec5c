"""The types shipped in the wheel (py.typed, the TypedDicts, _native.pyi) hold."""

import json
import re
import subprocess
import sys
from typing import Any, List

import little_compiler as little
from support import EXAMPLES, ROOT, documents, read

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


def test_the_typed_dicts_type_the_real_output(tmp_path):
    # The generated TypedDicts (_types.py, from the schemas of what little writes) against
    # what little gives: every example's output written as a typed literal, where mypy
    # refuses a missing, extra or mistyped key; and output that is not little's, where
    # the `type: ignore` must be used (--strict warns of an unused one).
    lines: List[str] = ["import little_compiler as L", ""]

    def typed(type_name: str, value: Any, refused: str = "") -> None:
        ignore = f"  # type: ignore[{refused}]" if refused else ""
        lines.append(f"v{len(lines)}: {type_name} = {value!r}{ignore}")

    for path, options in EXAMPLES:
        report = little.check(read(path), path=path, **documents(options))
        typed("L.Report", report)
        if report["files"][0]["document"] == "draft":
            try:
                typed("L.Compiled", little.compile(read(path), path=path, **documents(options)))
            except little.LittleError as error:
                assert error.code == "blocked"
                typed("L.Report", error.report)
    typed("L.Codes", little.codes())
    definition = read("examples/support-summarize-ticket/definition.json")
    typed("L.DefinitionSnapshot", little.snapshot(definition))
    typed("L.Registration", little.lock(read("examples/support-summarize-ticket/lwir.json"), definition))
    workspace = little.Workspace(**documents(("--context", "examples/context.json")))
    typed("L.Report", workspace.open("a.json", read("examples/broken-wiring.json")))
    typed("L.Report", workspace.report("a.json"))

    # Events of every kind and shape, as real sessions wrote them (the Rust tests hold every
    # event their sessions write to the schema these types come from).
    logged = [json.loads(line) for line in read("embed/tests/fixtures/events.jsonl").decode().splitlines() if line]
    for event in logged:
        typed("L.Event", event)
    registered = next(e for e in logged if e["type"] == "WorkflowVersionRegistered")
    typed("L.VersionRegisteredEvent", {**registered, "payload": {**registered["payload"], "extra": 1}}, "typeddict-unknown-key")
    typed("L.RunFailedEvent", registered, "typeddict-item")

    report = little.check(read("examples/cycle.json"))
    diagnostic = report["files"][0]["diagnostics"][0]
    typed("L.Report", {**report, "extra": 1}, "typeddict-unknown-key")
    typed("L.Diagnostic", {**diagnostic, "nodeId": None}, "typeddict-item")
    typed("L.Diagnostic", {**diagnostic, "severity": "fatal"}, "typeddict-item")
    clean = little.check(read("examples/quarterly-report.json"), **documents(("--context", "examples/context.json")))
    candidate = dict(clean["files"][0]["candidate"] or {})
    del candidate["topologyHash"]
    typed("L.DraftCandidate", candidate, "typeddict-item")

    outputs = tmp_path / "outputs.py"
    outputs.write_text("\n".join(lines) + "\n")
    run = mypy(str(outputs))
    assert run.returncode == 0, run.stdout + run.stderr
