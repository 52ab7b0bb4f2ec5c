#!/usr/bin/env python3
"""Benchmark of little_compiler against the command line (a script, not a test).

1. `check` of examples/quarterly-report.json (with examples/context.json and
   examples/bindings.json) in process, against spawning `little check` for it (the release
   binary);
2. a one-node `Workspace.update` on a generated 10,000-node draft, against a fresh `check`
   of it (and the full report with its candidate after the update).

Prints medians and ratios. Run it with the package installed (bindings/python/test.sh):

    target/python-venv/bin/python bindings/python/bench.py [--runs N] [--bin PATH]
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time
from typing import Callable, List

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE / "tests"))

import little_compiler as little  # noqa: E402
from drafts import draft  # noqa: E402


def median_seconds(call: Callable[[], object], runs: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        call()
    times: List[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def show(label: str, seconds: float) -> None:
    print(f"   {label:<52}{seconds * 1000:9.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="in-process runs per median (default 200)")
    parser.add_argument("--spawns", type=int, default=30, help="CLI spawns per median (default 30)")
    parser.add_argument("--nodes", type=int, default=10_000, help="nodes of the generated draft (default 10,000)")
    parser.add_argument("--bin", default=os.environ.get("LITTLE_RELEASE_BIN", str(ROOT / "target/release/little")))
    args = parser.parse_args()
    os.chdir(ROOT)
    if not os.access(args.bin, os.X_OK):
        print(f"bench: building {args.bin}", flush=True)
        subprocess.run(["cargo", "build", "--release", "--bin", "little"], check=True)

    print(f"little_compiler {little.__version__}, Python {sys.version.split()[0]}, CLI {args.bin}")

    # 1. One check in process against one spawn of the CLI.
    path = "examples/quarterly-report.json"
    text = (ROOT / path).read_bytes()
    context = (ROOT / "examples/context.json").read_bytes()
    bindings = (ROOT / "examples/bindings.json").read_bytes()
    command = [args.bin, "check", path, "--context", "examples/context.json", "--bindings", "examples/bindings.json"]
    command += ["--format", "json"]
    report = little.check(text, path=path, context=context, bindings=bindings)
    cli = json.loads(subprocess.run(command, capture_output=True, text=True).stdout)
    assert json.dumps(report, sort_keys=True) == json.dumps(cli, sort_keys=True), "the reports differ"
    in_process = median_seconds(lambda: little.check(text, path=path, context=context, bindings=bindings), args.runs)
    spawned = median_seconds(lambda: subprocess.run(command, capture_output=True, check=False), args.spawns)
    print(f"\n1. check {path} (+ context, bindings)")
    show(f"in process (little_compiler.check), median of {args.runs}", in_process)
    show(f"spawning `little check`, median of {args.spawns}", spawned)
    print(f"   spawning / in process: {spawned / in_process:.1f}x")

    # 2. A one-node edit in a Workspace against a fresh check of the whole draft.
    large = draft(args.nodes)
    fresh = little.check(large, path="large.json")
    summary = fresh["summary"]
    assert summary["errors"] == 0 and summary["warnings"] == 0, summary
    assert fresh["files"][0]["candidate"] is not None, "the generated draft is clean"
    lines = large.split("\n")
    line = next(i for i, l in enumerate(lines) if f'"fetch_{args.nodes // 2 + 1}"' in l)
    column = lines[line].index("where batch = ") + len("where batch = ")
    at = {"line": line, "character": column}
    after = {"line": line, "character": column + 1}
    insert = [{"range": {"start": at, "end": at}, "text": "1"}]
    delete = [{"range": {"start": at, "end": after}, "text": ""}]
    workspace = little.Workspace()
    workspace.open("large.json", large)
    edits = iter(range(1 << 62))

    def update() -> None:
        # Alternately insert and delete a digit in one node's query (its config).
        report = workspace.update("large.json", insert if next(edits) % 2 == 0 else delete)
        assert report["summary"]["errors"] == 0

    def update_and_report() -> None:
        update()
        assert workspace.report("large.json")["files"][0]["candidate"] is not None

    updates = median_seconds(update, args.runs)
    with_report = median_seconds(update_and_report, max(args.runs // 4, 10))
    checks = median_seconds(lambda: little.check(large, path="large.json"), max(args.runs // 20, 5), warmup=1)
    print(f"\n2. {args.nodes:,}-node generated draft ({len(large) / 1e6:.1f} MB): one node's config edited")
    show(f"Workspace.update (diagnostics), median of {args.runs}", updates)
    show(f"Workspace.update + report (candidate), median of {max(args.runs // 4, 10)}", with_report)
    show(f"fresh check, median of {max(args.runs // 20, 5)}", checks)
    print(f"   fresh check / update: {checks / updates:.1f}x; fresh check / update + report: {checks / with_report:.1f}x")


if __name__ == "__main__":
    main()
