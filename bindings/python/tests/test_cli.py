"""The binding gives what the command line prints, for every bundled example."""

import importlib.metadata
import json
import tempfile

import pytest

import little_compiler as little
from support import EXAMPLES, ROOT, canonical, cli, cli_json, documents, read


@pytest.mark.parametrize("path,options", EXAMPLES, ids=[f"{p} {' '.join(o)}" for p, o in EXAMPLES])
def test_every_example_reports_what_little_check_prints(path, options):
    expected = cli_json("check", path, "--format", "json", *options)
    report = little.check(read(path), path=path, **documents(options))
    assert canonical(report) == canonical(expected)


def test_documents_as_text_bytes_or_parsed_json_give_one_report():
    path = "examples/quarterly-report.json"
    options = ("--context", "examples/context.json", "--bindings", "examples/bindings.json")
    expected = canonical(cli_json("check", path, "--format", "json", *options))
    as_bytes = documents(options)
    as_text = {name: text.decode() for name, text in as_bytes.items()}
    parsed = {name: json.loads(text) for name, text in as_bytes.items()}
    for docs in (as_bytes, as_text, parsed):
        assert canonical(little.check(read(path).decode(), path=path, **docs)) == expected
    assert little.check(read(path), **as_bytes)["files"][0]["path"] == "<input>"


def test_compile_writes_what_little_compile_writes():
    path = "examples/quarterly-report.json"
    options = ("--context", "examples/context.json", "--bindings", "examples/bindings.json")
    with tempfile.TemporaryDirectory() as out:
        run = cli("compile", path, "-o", f"{out}/compiled.json", *options)
        assert run.returncode == 0, run.stderr
        written = json.loads(open(f"{out}/compiled.json").read())
    compiled = little.compile(read(path), path=path, **documents(options))
    assert canonical(compiled) == canonical(written)
    assert compiled["format"] == "little-compiled/v1"


def test_a_blocked_compile_raises_with_its_report():
    with pytest.raises(little.LittleError) as raised:
        little.compile(read("examples/cycle.json"), path="cycle.json")
    error = raised.value
    assert (error.code, error.path) == ("blocked", "cycle.json")
    assert error.report is not None
    assert "graph.cycle" in [d["code"] for d in error.report["files"][0]["diagnostics"]]
    with pytest.raises(little.LittleError) as lwir:
        little.compile(read("examples/lwir/summarize-ticket.lwir.json"))
    assert lwir.value.code == "document.kind"


def test_snapshot_and_lock_are_little_snapshot_and_little_lock():
    definition = "examples/support-summarize-ticket/definition.json"
    lwir = "examples/support-summarize-ticket/lwir.json"
    assert canonical(little.snapshot(read(definition))) == canonical(cli_json("snapshot", definition))
    expected = cli_json("lock", lwir, "--definition", definition)
    assert canonical(little.lock(read(lwir), read(definition))) == canonical(expected)
    # A parsed definition gives the same snapshot.
    assert little.snapshot(json.loads(read(definition))) == little.snapshot(read(definition).decode())
    with pytest.raises(little.LittleError) as faulty:
        little.lock(read("examples/lwir/faulty-plan.lwir.json"), read(definition))
    assert (faulty.value.code, faulty.value.path) == ("blocked", "lwir")
    assert faulty.value.report is not None and faulty.value.report["summary"]["blocking"] >= 1


def test_explain_codes_hash_and_schema_are_the_cli_s():
    assert little.explain("graph.cycle") == cli("explain", "graph.cycle").stdout
    with pytest.raises(little.LittleError) as unknown:
        little.explain("graph.cycel")
    assert unknown.value.code == "code.unknown"
    assert "did you mean `graph.cycle`?" in str(unknown.value)
    codes = little.codes()
    assert len(codes) == len(cli("explain").stdout.splitlines())
    assert codes[0]["code"] == "parse.invalid_json"
    assert set(codes[0]) == {"code", "severity", "blocking", "summary"}
    path = "examples/quarterly-report.json"
    expected = cli("hash", path).stdout.strip()
    assert little.hash(read(path)) == expected
    assert little.hash(read(path).decode()) == expected
    assert little.hash(json.loads(read(path))) == expected
    with pytest.raises(little.LittleError) as invalid:
        little.hash('{ "a": ')
    assert invalid.value.code == "json.invalid"
    for name in little.schema_names():
        assert little.schema(name) == cli_json("schema", name)
    with pytest.raises(little.LittleError) as schema:
        little.schema("drafts")
    assert schema.value.code == "schema.unknown"


def test_the_package_says_what_it_is():
    # The wheel's version is the crate's.
    assert little.__version__ == importlib.metadata.version("little-compiler")
    assert little.Workspace.__module__ == "little_compiler"
    assert issubclass(little.LittleError, Exception)
    assert (ROOT / "examples").is_dir()
