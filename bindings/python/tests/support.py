"""What the tests share: the repository, the little binary, the examples."""

import json
import os
import pathlib
import subprocess
from typing import Any, Dict, List, Tuple

ROOT = pathlib.Path(__file__).resolve().parents[3]

# Every bundled example with the documents it is checked with (tests/embed.rs, the README).
EXAMPLES: List[Tuple[str, Tuple[str, ...]]] = [
    ("examples/quarterly-report.json", ("--context", "examples/context.json", "--bindings", "examples/bindings.json")),
    ("examples/broken-wiring.json", ("--context", "examples/context.json")),
    ("examples/broken-wiring.json", ()),
    ("examples/contract-mismatch.json", ("--context", "examples/context.json", "--bindings", "examples/bindings.json")),
    ("examples/cycle.json", ("--context", "examples/context.json")),
    ("examples/graph-demo.json", ()),
    ("examples/support-triage.json", ("--context", "examples/context.json")),
    ("examples/lwir/summarize-ticket.lwir.json", ("--snapshot", "examples/lwir/snapshot.json")),
    ("examples/lwir/faulty-plan.lwir.json", ("--snapshot", "examples/lwir/snapshot.json")),
    ("examples/lwir/summarize-ticket.lwir.json", ()),
]


def read(path: str) -> bytes:
    return (ROOT / path).read_bytes()


def little_bin() -> str:
    """`$LITTLE_BIN`, or cargo's debug/little, built if it is missing."""
    target = os.environ.get("CARGO_TARGET_DIR") or str(ROOT / "target")
    path = os.environ.get("LITTLE_BIN") or os.path.join(target, "debug", "little")
    if not os.access(path, os.X_OK):
        subprocess.run(["cargo", "build", "--bin", "little"], cwd=ROOT, check=True)
    return path


def cli(*args: str) -> "subprocess.CompletedProcess[str]":
    """Runs little in the repository root."""
    return subprocess.run([little_bin(), *args], cwd=ROOT, capture_output=True, text=True)


def cli_json(*args: str) -> Any:
    run = cli(*args)
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)


def documents(options: Tuple[str, ...]) -> Dict[str, bytes]:
    """`--context path` … as keyword arguments of the binding, each document's bytes."""
    return {options[i].lstrip("-"): read(options[i + 1]) for i in range(0, len(options), 2)}


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
