"""`little snapshot|lock|verify --tools-from-mcp`: the tool registry from a real MCP server
written with the Python SDK's `MCPServer` (registry_server.py)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[3]
LITTLE = os.environ["LITTLE_BIN"]
SERVER = f"{sys.executable} {Path(__file__).with_name('registry_server.py')}"
EXAMPLE = ROOT / "examples/support-summarize-ticket"
# A Python server takes seconds to import its SDK on a loaded machine: more than the
# default 10 s when a test starts two at once.
SLOW_START = ("--mcp-timeout", "60s")


def little(*args, env=None, timeout=60):
    return subprocess.run([LITTLE, *args], capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=timeout)


def server_tools():
    """The server's tools as the SDK lists them, in the definition's shape."""

    async def listed():
        params = StdioServerParameters(command=sys.executable, args=[str(Path(__file__).with_name("registry_server.py"))])
        async with Client(params) as client:
            return (await client.list_tools()).tools

    import anyio

    return [
        {"id": t.name, "description": t.description or "", "inputSchema": t.input_schema, "outputSchema": t.output_schema}
        for t in anyio.run(listed)
    ]


@pytest.fixture
def definitions(tmp_path):
    """The example definition granting `helpdesk.getTicket` globally: its tools from the
    server (`tools: []`), and the same descriptors written inline."""
    definition = json.loads((EXAMPLE / "definition.json").read_text())
    definition["globalTools"] = ["helpdesk.getTicket"]
    from_mcp = tmp_path / "from-mcp.json"
    from_mcp.write_text(json.dumps(definition, indent=2))
    definition["tools"] = server_tools()
    inline = tmp_path / "inline.json"
    inline.write_text(json.dumps(definition, indent=2))
    return from_mcp, inline


def test_snapshot_and_lock_from_the_server_hash_as_the_same_descriptors_inline(definitions, tmp_path):
    from_mcp, inline = definitions
    assert len(json.loads(inline.read_text())["tools"]) == 2
    mcp_snapshot = little("snapshot", str(from_mcp), "--tools-from-mcp", SERVER)
    assert mcp_snapshot.returncode == 0, mcp_snapshot.stderr
    assert json.loads(mcp_snapshot.stdout) == json.loads(little("snapshot", str(inline)).stdout)
    manifest = little("snapshot", str(from_mcp), "--manifest", "--tools-from-mcp", SERVER)
    assert json.loads(manifest.stdout)["manifestHash"] == json.loads(little("snapshot", str(inline), "--manifest").stdout)["manifestHash"]
    lwir = str(EXAMPLE / "lwir.json")
    mcp_lock = little("lock", lwir, "--definition", str(from_mcp), "--tools-from-mcp", SERVER)
    assert mcp_lock.returncode == 0, mcp_lock.stderr
    inline_lock = little("lock", lwir, "--definition", str(inline))
    assert json.loads(mcp_lock.stdout) == json.loads(inline_lock.stdout)
    assert json.loads(mcp_lock.stdout)["lock"]["capabilityManifest"]["tools"][0]["id"] == "helpdesk.getTicket"


def test_verify_reports_a_changed_description_and_a_tool_no_longer_offered(definitions, tmp_path):
    from_mcp, _ = definitions
    lwir = str(EXAMPLE / "lwir.json")
    lock = tmp_path / "lock.json"
    locked = little("lock", lwir, "--definition", str(from_mcp), "--tools-from-mcp", SERVER, "-o", str(lock))
    assert locked.returncode == 0, locked.stderr
    same = little("verify", lwir, "--lock", str(lock), "--definition", str(from_mcp), "--tools-from-mcp", SERVER)
    assert same.returncode == 0, same.stdout + same.stderr
    changed = little(
        "verify", lwir, "--lock", str(lock), "--definition", str(from_mcp), "--tools-from-mcp", SERVER,
        env={"REGISTRY_DESCRIPTION": "Fetch a ticket, and close it."},
    )
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "pipeline.capability_drift" in changed.stdout
    assert "tool `helpdesk.getTicket` changed since the lock: its description" in changed.stdout
    gone = little(
        "verify", lwir, "--lock", str(lock), "--definition", str(from_mcp), "--tools-from-mcp", SERVER,
        env={"REGISTRY_DROP": "getTicket"},
    )
    assert gone.returncode == 1, gone.stdout + gone.stderr
    assert "the lock grants tool `helpdesk.getTicket`, which the tool registry no longer offers" in gone.stdout


def test_a_tool_offered_twice_is_refused(definitions):
    from_mcp, inline = definitions
    twice = little("snapshot", str(from_mcp), "--tools-from-mcp", SERVER, "--tools-from-mcp", SERVER, *SLOW_START)
    assert twice.returncode == 2
    assert "tool `helpdesk.closeTicket` is offered by" in twice.stderr or "tool `helpdesk.getTicket` is offered by" in twice.stderr
    also_inline = little("snapshot", str(inline), "--tools-from-mcp", SERVER)
    assert also_inline.returncode == 2 and "the definition's `tools`" in also_inline.stderr


@pytest.mark.parametrize(
    "mode, said",
    [("exit", "cannot reach the ticket database"), ("hang", "did not answer within 2 s"), ("garbage", "does not speak MCP")],
)
def test_a_server_that_exits_hangs_or_is_not_mcp_is_exit_2_within_the_timeout(definitions, mode, said):
    from_mcp, _ = definitions
    started = time.monotonic()
    run = little("snapshot", str(from_mcp), "--tools-from-mcp", SERVER, "--mcp-timeout", "2s", env={"REGISTRY_MODE": mode}, timeout=30)
    elapsed = time.monotonic() - started
    assert run.returncode == 2, run.stdout + run.stderr
    assert said in run.stderr, run.stderr
    assert elapsed < 8, elapsed
    assert run.stdout == ""


def test_plan_takes_its_registry_from_the_server_too(definitions, tmp_path):
    from_mcp, inline = definitions
    lwir = EXAMPLE / "lwir.json"
    planner = f"cat {lwir}"
    planned = {}
    for name, definition, extra in [("mcp", from_mcp, ["--tools-from-mcp", SERVER]), ("inline", inline, [])]:
        out = tmp_path / f"{name}-lock.json"
        run = little(
            "plan", str(definition), "--input", str(EXAMPLE / "input.json"), "--run-id", f"run_{name}",
            "--events", str(tmp_path / f"{name}.jsonl"), "--planner", planner, "-o", str(out), *extra,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        planned[name] = json.loads(out.read_text())
    assert planned["mcp"] == planned["inline"]
    assert planned["mcp"]["lock"]["capabilityManifest"]["tools"][0]["id"] == "helpdesk.getTicket"


def calling_get_ticket(path):
    """The example's LWIR with a `tool.call` step on `helpdesk.getTicket` before the summary."""
    lwir = json.loads((EXAMPLE / "lwir.json").read_text())
    lwir["permissions"]["tools"] = ["helpdesk.getTicket"]
    lookup = {
        "id": "lookup", "uses": "tool.call", "needs": [],
        "with": {"tool": "helpdesk.getTicket", "input": {"ticketId": "{{ input.ticketId }}"}},
        "output": {"mode": "object", "schema": {
            "type": "object", "required": ["subject", "transcript"],
            "properties": {"subject": {"type": "string"}, "transcript": {"type": "string"}},
        }},
    }
    lwir["steps"][0]["needs"] = ["lookup"]
    lwir["steps"][0]["with"]["prompt"] += "\nSubject: {{ steps.lookup.output.subject }}"
    lwir["steps"].insert(0, lookup)
    path.write_text(json.dumps(lwir, indent=2))
    return path


def test_a_tool_call_on_a_tool_listed_without_an_output_schema_is_refused_by_plan_and_lock(definitions, tmp_path):
    from_mcp, _ = definitions
    lwir = calling_get_ticket(tmp_path / "lwir.json")
    untyped = {"REGISTRY_UNTYPED": "getTicket"}
    said = (
        f"step `lookup` calls `helpdesk.getTicket`, which the MCP server `{SERVER}` lists without an output schema"
    )
    # The tool itself is not refused: the definition snapshots with it, hashed as any output.
    snapshot = little("snapshot", str(from_mcp), "--tools-from-mcp", SERVER, *SLOW_START, env=untyped)
    assert snapshot.returncode == 0, snapshot.stderr
    locked = little("lock", str(lwir), "--definition", str(from_mcp), "--tools-from-mcp", SERVER, *SLOW_START, env=untyped)
    assert locked.returncode == 1, locked.stdout + locked.stderr
    assert "pipeline.tool_without_output_schema" in locked.stdout and said in locked.stdout, locked.stdout
    planned = little(
        "plan", str(from_mcp), "--input", str(EXAMPLE / "input.json"), "--run-id", "run_untyped",
        "--events", str(tmp_path / "untyped.jsonl"), "--max-attempts", "2",
        "--planner", f"cat > {tmp_path}/task-$LITTLE_ATTEMPT.json; cat {lwir}",
        "--tools-from-mcp", SERVER, *SLOW_START, env=untyped,
    )
    assert planned.returncode == 1, planned.stdout + planned.stderr
    assert "pipeline.tool_without_output_schema" in planned.stdout and said in planned.stdout, planned.stdout
    # The planner reads the finding in its second attempt's task, as any other.
    assert "pipeline.tool_without_output_schema" not in (tmp_path / "task-1.json").read_text()
    assert "pipeline.tool_without_output_schema" in (tmp_path / "task-2.json").read_text()
    # The same LWIR with the tool listed with its output schema plans and locks.
    typed = little(
        "plan", str(from_mcp), "--input", str(EXAMPLE / "input.json"), "--run-id", "run_typed",
        "--events", str(tmp_path / "typed.jsonl"), "--planner", f"cat {lwir}", "--tools-from-mcp", SERVER, *SLOW_START,
    )
    assert typed.returncode == 0, typed.stdout + typed.stderr
    relock = little("lock", str(lwir), "--definition", str(from_mcp), "--tools-from-mcp", SERVER, *SLOW_START)
    assert relock.returncode == 0, relock.stdout + relock.stderr
