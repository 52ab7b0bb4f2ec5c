"""Hostile input: a report or a LittleError, never a crash, and the interpreter lives."""

import json
import math
import subprocess
import sys
import textwrap

import pytest

import little_compiler as little
from support import ROOT, read


def diagnostics(report):
    return [d["code"] for d in report["files"][0]["diagnostics"]]


def test_bytes_that_are_not_utf8_are_little_s_own_diagnostic():
    report = little.check(b'{"format": "\xff"}', path="bytes.json")
    assert diagnostics(report)[0] == "parse.invalid_json"
    # A str with a lone surrogate is the same: its bytes are not UTF-8.
    report = little.check('{"format": "\ud800"}', path="surrogate.json")
    assert diagnostics(report)[0] == "parse.invalid_json"


def test_deep_nesting_and_a_50_mb_string_in_a_fresh_interpreter():
    # Run apart, so that a crash (a stack overflow) is this test failing, not pytest dying.
    script = textwrap.dedent(
        """
        import json
        import little_compiler as little
        deep = "[" * 200_000 + "]" * 200_000
        report = little.check(deep, path="deep.json")
        assert report["summary"]["errors"] >= 1, report["summary"]
        # The same depth as a Python document: written as JSON without recursion, then
        # refused by little's parser as the text is.
        nested = []
        for _ in range(200_000):
            nested = [nested]
        for document in (deep, nested):
            try:
                little.hash(document)
                raise AssertionError("hashed")
            except little.LittleError as error:
                assert error.code == "json.invalid" and "nesting" in error.message, error
        try:
            little.check("{}", catalog=nested)
        except little.LittleError as error:
            assert (error.code, error.path) == ("input.invalid", "catalog"), error
        # A 50 MB string: a node's title, as text, bytes and a parsed document.
        demo = json.loads(open("examples/graph-demo.json").read())
        expected = [d["code"] for d in little.check(json.dumps(demo))["files"][0]["diagnostics"]]
        demo["nodes"][0]["title"] = "x" * (50 << 20)
        text = json.dumps(demo)
        for document in (text, text.encode()):
            report = little.check(document, path="long.json")
            assert [d["code"] for d in report["files"][0]["diagnostics"]] == expected
        assert little.hash(demo) == little.hash(text)
        # And as an unknown `format`: one diagnostic, whose message does not echo it.
        text = '{"format": "' + "x" * (50 << 20) + '"}'
        for document in (text, text.encode()):
            report = little.check(document, path="format.json")
            diagnostic = report["files"][0]["diagnostics"][0]
            assert diagnostic["code"] == "parse.unsupported_format"
            assert len(diagnostic["message"]) < 1000
        print("alive")
        """
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"exit {run.returncode}: {run.stderr[-2000:]}"
    assert run.stdout.strip() == "alive"


def test_a_catalog_that_is_not_json_is_an_error_naming_it():
    for catalog in ("not json", b"not json", b"\xff", '{"format": '):
        with pytest.raises(little.LittleError) as raised:
            little.check(read("examples/graph-demo.json"), catalog=catalog)
        assert (raised.value.code, raised.value.path) == ("input.invalid", "catalog")
        assert raised.value.report is None


def definition_with(value):
    definition = json.loads(read("examples/support-summarize-ticket/definition.json"))
    definition["tools"] = [{"name": "t", "execute": value}]
    return definition


@pytest.mark.parametrize(
    "value,message",
    [
        (print, "builtin_function_or_method"),
        (lambda: 1, "function"),
        ({1, 2}, "a set is not JSON"),
        (b"bytes", "bytes"),
        (math.nan, "NaN"),
        (math.inf, "inf"),
        (object(), "an object is not JSON"),
        (1j, "complex"),
    ],
)
def test_a_python_value_that_is_not_json_is_refused_with_its_path(value, message):
    with pytest.raises(little.LittleError) as raised:
        little.snapshot(definition_with(value))
    error = raised.value
    assert (error.code, error.path) == ("input.invalid", "definition.tools[0].execute")
    assert message in error.message and "definition.tools[0].execute" in error.message


def test_keys_cycles_and_surrogates_are_refused_too():
    cases = [
        ({"nodes": [{1: "a"}]}, "catalog.nodes[0]"),
        ({"a b": {"ok": "\udc80"}}, 'catalog["a b"].ok'),
        ({"\udc80": 1}, "catalog"),
    ]
    looped: list = []
    looped.append({"again": looped})
    cases.append((looped, "catalog[0].again"))
    for catalog, path in cases:
        with pytest.raises(little.LittleError) as raised:
            little.check("{}", catalog=catalog)
        assert (raised.value.code, raised.value.path) == ("input.invalid", path), raised.value.message


def test_arguments_of_the_wrong_kind_are_errors():
    for text in (None, 42, ["a"], {"a": 1}):
        with pytest.raises(little.LittleError) as raised:
            little.check(text)
        assert (raised.value.code, raised.value.path) == ("input.invalid", "text")
    with pytest.raises(little.LittleError) as raised:
        little.check("{}", context=3.5)
    assert (raised.value.code, raised.value.path) == ("input.invalid", "context")
    workspace = little.Workspace()
    with pytest.raises(little.LittleError) as raised:
        workspace.open("a.json", "\ud800")
    assert raised.value.code == "input.invalid"
    with pytest.raises(little.LittleError):
        workspace.open("a.json", b"\xff")
    assert workspace.paths() == []
    # Big numbers, tuples, bool and None in a parsed document are JSON.
    assert little.hash({"n": 2**80, "t": (1, 2.5, True, None)}) == little.hash('{"n":1208925819614629174706176,"t":[1,2.5,true,null]}')


def test_little_error_pickles_and_prints():
    import pickle

    error = little.LittleError("blocked", "it blocks", "a.json", {"format": "little-report/v1"})
    again = pickle.loads(pickle.dumps(error))
    assert (again.code, again.message, again.path, again.report) == ("blocked", "it blocks", "a.json", error.report)
    assert str(again) == "it blocks"
