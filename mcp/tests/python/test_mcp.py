"""`little mcp` through the official Python SDK (`mcp` on PyPI), over stdio.

Each test starts `little mcp` as the SDK's stdio client does and compares what it gets
with what the command line prints. The raw tests at the end write bytes no SDK would send.
"""

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
import mcp_types as types

ROOT = Path(__file__).resolve().parents[3]
LITTLE = os.environ["LITTLE_BIN"]
TOOLS = {"check", "explain", "codes", "families", "schema", "hash", "compile", "graph", "snapshot", "lock"}

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def roots_callback(*dirs):
    async def list_roots(_context):
        return types.ListRootsResult(roots=[types.Root(uri=Path(d).resolve().as_uri()) for d in dirs])

    return list_roots


def client(*roots, cwd=ROOT, mode="auto"):
    server = StdioServerParameters(command=LITTLE, args=["mcp"], cwd=str(cwd))
    callback = roots_callback(*roots) if roots else None
    return Client(server, list_roots_callback=callback, mode=mode, read_timeout_seconds=120)


def cli_report(path, *extra):
    run = subprocess.run([LITTLE, "check", "--format", "json", path, *extra], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode in (0, 1), run.stderr
    return json.loads(run.stdout)


def error_of(result):
    assert result.is_error, result
    return json.loads(result.content[1].text)["error"]


async def test_the_tools_and_their_schemas_are_listed():
    async with client(ROOT) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and tool.input_schema["type"] == "object", tool.name
        assert tool.output_schema["type"] == "object", tool.name
    # The check's output is the report schema, whole: a client needs nothing else.
    assert tools["check"].output_schema["title"] == "Report"
    assert "FileReport" in tools["check"].output_schema["$defs"]
    # `little schema mcp` prints the same list.
    printed = json.loads(subprocess.run([LITTLE, "schema", "mcp"], capture_output=True, text=True, check=True).stdout)
    assert {t["name"]: t["outputSchema"] for t in printed} == {n: t.output_schema for n, t in tools.items()}


def bundled_examples():
    listed = cli_report("examples")["files"]
    assert len(listed) >= 8
    return [f["path"] for f in listed]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_bundled_example_gets_the_report_the_cli_prints(mode):
    async with client(ROOT, mode=mode) as c:
        for path in bundled_examples():
            result = await c.call_tool("check", {"path": path})
            assert not result.is_error, result.content
            assert result.structured_content == cli_report(path), path
            summary = result.structured_content["summary"]
            assert result.content[0].text.startswith(f"{summary['errors']} error(s)"), path


async def test_a_text_gets_the_report_of_the_same_file():
    text = (ROOT / "examples/quarterly-report.json").read_text()
    async with client() as c:
        result = await c.call_tool("check", {"text": text, "name": "examples/quarterly-report.json"})
    assert result.structured_content == cli_report("examples/quarterly-report.json")


async def test_a_broken_draft_gets_the_cycle_witness_and_the_did_you_mean():
    draft = json.loads((ROOT / "examples/cycle.json").read_text())
    # A node outside the cycle, its family misspelt.
    right = "notify.chat"
    draft["nodes"].append({"id": "extra", "family": "notify.chta", "config": {}})
    async with client() as c:
        result = await c.call_tool("check", {"text": json.dumps(draft, indent=2)})
    diagnostics = result.structured_content["files"][0]["diagnostics"]
    witnesses = [d["witness"] for d in diagnostics if "witness" in d]
    assert witnesses and witnesses[0]["nodes"] and witnesses[0]["edges"]
    assert any(right in d.get("help", "") for d in diagnostics), diagnostics
    # The short text names the diagnostics with their line.
    assert ":" in result.content[0].text.splitlines()[1]


async def test_the_other_tools_answer_as_the_cli():
    async with client(ROOT) as c:
        explained = await c.call_tool("explain", {"code": "graph.cycle"})
        hashed = await c.call_tool("hash", {"path": "examples/quarterly-report.json"})
        graph = await c.call_tool("graph", {"path": "examples/cycle.json"})
        codes = await c.call_tool("codes", {})
        families = await c.call_tool("families", {"query": "agent"})
        schema = await c.call_tool("schema", {"name": "report"})
        compiled = await c.call_tool("compile", {"path": "examples/quarterly-report.json"})
        blocked = await c.call_tool("compile", {"path": "examples/cycle.json"})
        snapshot = await c.call_tool("snapshot", {"path": "examples/support-summarize-ticket/definition.json"})
        lock = await c.call_tool(
            "lock",
            {"path": "examples/support-summarize-ticket/lwir.json", "definition": "examples/support-summarize-ticket/definition.json"},
        )
        unknown = await c.call_tool("explain", {"code": "graph.cycel"})

    def cli(*args):
        return subprocess.run([LITTLE, *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout

    assert explained.structured_content["page"] == cli("explain", "graph.cycle")
    assert hashed.structured_content["hash"] == cli("hash", "examples/quarterly-report.json").strip()
    assert graph.structured_content["mermaid"] == cli("graph", "--format", "mermaid", "examples/cycle.json")
    assert len(codes.structured_content["codes"]) == len(cli("explain").splitlines())
    assert families.structured_content["families"] and all(
        "agent" in (f["id"] + f["kind"] + f["semantic"]).lower() for f in families.structured_content["families"]
    )
    assert schema.structured_content["schema"] == json.loads(cli("schema", "report"))
    assert compiled.structured_content["format"] == "little-compiled/v1"
    error = error_of(blocked)
    assert error["code"] == "blocked" and error["report"]["summary"]["blocking"] > 0
    assert snapshot.structured_content == json.loads(cli("snapshot", "examples/support-summarize-ticket/definition.json"))
    assert lock.structured_content["workflowVersion"]["id"], lock.content
    assert "did you mean `graph.cycle`" in unknown.content[0].text


async def test_resources_are_the_schemas_pages_and_catalog():
    async with client() as c:
        listed = {r.uri for r in (await c.list_resources()).resources}
        page = await c.read_resource("little://explain/graph.cycle")
        schema = await c.read_resource("little://schemas/draft")
        catalog = await c.read_resource("little://catalog")
    assert {"little://catalog", "little://schemas/report", "little://explain/graph.cycle"} <= listed
    explain = subprocess.run([LITTLE, "explain", "graph.cycle"], capture_output=True, text=True, check=True).stdout
    assert page.contents[0].text == explain
    assert json.loads(schema.contents[0].text)["$id"].endswith("draft.schema.json")
    assert json.loads(catalog.contents[0].text)["format"] == "workflow-catalog/v1"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_path_outside_the_roots_or_a_symlink_out_is_refused(mode):
    with tempfile.TemporaryDirectory() as root:
        inside = Path(root) / "draft.json"
        inside.write_text((ROOT / "examples/quarterly-report.json").read_text())
        (Path(root) / "out.json").symlink_to(ROOT / "examples/cycle.json")
        async with client(root, mode=mode) as c:
            ok = await c.call_tool("check", {"path": "draft.json"})
            outside = await c.call_tool("check", {"path": str(ROOT / "examples/cycle.json")})
            linked = await c.call_tool("check", {"path": "out.json"})
            catalog = await c.call_tool("check", {"path": "draft.json", "catalog": "/etc/passwd"})
    assert not ok.is_error and ok.structured_content["summary"]["files"] == 1
    for refused in (outside, linked, catalog):
        error = error_of(refused)
        assert error["code"] == "path.outside_roots", error
        assert "outside the client's roots" in error["message"]
    assert "resolves to" in error_of(linked)["message"]


async def test_without_roots_the_working_directory_is_the_root():
    with tempfile.TemporaryDirectory() as cwd:
        (Path(cwd) / "draft.json").write_text((ROOT / "examples/quarterly-report.json").read_text())
        async with client(cwd=cwd) as c:
            ok = await c.call_tool("check", {"path": "draft.json"})
            outside = await c.call_tool("check", {"path": str(ROOT / "examples/cycle.json")})
    assert not ok.is_error
    assert "working directory" in error_of(outside)["message"]


async def test_it_survives_a_50_mb_string_and_a_200000_deep_document():
    async with client() as c:
        huge = await c.call_tool("check", {"text": '"' + "x" * (50 << 20) + '"'})
        deep = await c.call_tool("check", {"text": "[" * 200_000 + "]" * 200_000})
        still = await c.call_tool("codes", {})
    assert not huge.is_error and huge.structured_content["summary"]["files"] == 1
    assert not deep.is_error and deep.structured_content["summary"]["files"] == 1
    assert still.structured_content["codes"]


async def test_a_text_over_the_size_limit_is_refused():
    server = StdioServerParameters(command=LITTLE, args=["mcp", "--max-file-size", "1K"], cwd=str(ROOT))
    async with Client(server) as c:
        result = await c.call_tool("check", {"text": " " * 2000})
    assert error_of(result)["code"] == "input.too_large"


def raw_exchange(lines):
    """Writes `lines` to `little mcp` and reads one answer a line that has an id."""
    process = subprocess.Popen([LITTLE, "mcp"], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    answers = []
    try:
        for line, answered in lines:
            process.stdin.write(line + b"\n")
            process.stdin.flush()
            if answered:
                answers.append(json.loads(process.stdout.readline()))
    finally:
        process.stdin.close()
        process.wait(timeout=10)
    return answers, process.returncode


def test_a_request_that_is_not_json_is_a_json_rpc_error_and_the_server_lives_on():
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    deep = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"check","arguments":{"text":' + b"[" * 200_000 + b"]" * 200_000 + b"}}}"
    answers, code = raw_exchange([
        (json.dumps(init).encode(), True),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', False),
        (b"this is not json", True),
        (deep, True),
        (b'{"jsonrpc":"2.0","id":"x","method":"tools/list"}', True),
    ])
    assert answers[0]["result"]["serverInfo"]["name"] == "little"
    assert answers[1]["error"]["code"] == -32700 and answers[1]["id"] is None
    assert answers[2]["id"] == 7 and answers[2]["error"]["code"] == -32700
    assert answers[3]["id"] == "x" and len(answers[3]["result"]["tools"]) == len(TOOLS)
    assert code == 0
