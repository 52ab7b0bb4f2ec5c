"""Client-side time of `little mcp` calls over its stdio, with the thinnest client (JSON
lines on a pipe, no SDK), against the CLI process: `python3 mcp/bench_pipe.py LITTLE`.

- `check`: a `check` of examples/quarterly-report.json given as `text`;
- `hash {}`: a call whose work is nothing, i.e. the protocol's own cost (framing, the
  JSON of the request and the answer, the server's threads);
- `cli`: `little check --format json examples/quarterly-report.json`, a process a check.

The criterion benchmark (`bash mcp/bench.sh`) measures the in-process call beside them.
"""

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LITTLE = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target/release/little")
EXAMPLE = "examples/quarterly-report.json"
ROUNDS = 300


def main():
    server = subprocess.Popen([LITTLE, "mcp"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    ids = iter(range(1, 1 << 30))

    def ask(method, params):
        line = json.dumps({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}) + "\n"
        server.stdin.write(line.encode())
        server.stdin.flush()
        return json.loads(server.stdout.readline())

    ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
    server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    text = (ROOT / EXAMPLE).read_text()
    calls = {
        "check": {"name": "check", "arguments": {"text": text, "name": EXAMPLE}},
        "hash {}": {"name": "hash", "arguments": {"text": "{}"}},
    }
    cli = [LITTLE, "check", "--format", "json", EXAMPLE]
    expected = json.loads(subprocess.run(cli, cwd=ROOT, capture_output=True, text=True).stdout)
    assert ask("tools/call", calls["check"])["result"]["structuredContent"] == expected
    times = {name: [] for name in [*calls, "cli"]}
    for _ in range(ROUNDS):
        for name, params in calls.items():
            started = time.perf_counter()
            ask("tools/call", params)
            times[name].append(time.perf_counter() - started)
    for _ in range(ROUNDS // 10):
        started = time.perf_counter()
        subprocess.run(cli, cwd=ROOT, capture_output=True)
        times["cli"].append(time.perf_counter() - started)
    server.stdin.close()
    server.wait(timeout=10)
    for name, samples in times.items():
        print(f"{name:8} median {statistics.median(samples) * 1e3:.3f} ms  (p10 {statistics.quantiles(samples, n=10)[0] * 1e3:.3f}, p90 {statistics.quantiles(samples, n=10)[-1] * 1e3:.3f}; {len(samples)} runs)")


if __name__ == "__main__":
    main()
