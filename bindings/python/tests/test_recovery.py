"""The editor's recovery through the package's Workspace: a bare word typed into the first
example is the parse fault and nothing else (it once reported four untouched nodes
missing), and one far-off typo in a chain of 10,000 nodes is two diagnostics."""

import json
import re

import little_compiler as little
from support import documents, read

OPTIONS = ("--context", "examples/context.json", "--bindings", "examples/bindings.json")


def codes(report):
    return sorted(d["code"] for d in report["files"][0]["diagnostics"] if d["severity"] != "info")


def test_a_bare_word_typed_over_the_send_config_line_is_the_parse_fault_alone():
    text = read("examples/quarterly-report.json").decode()
    line = '      "config": { "sender": "mail_ops"'
    assert line in text
    broken = text.replace(line, "inn" + line[2:], 1)
    workspace = little.Workspace(**documents(OPTIONS))
    assert codes(workspace.open("draft.json", text)) == []
    assert codes(workspace.update("draft.json", broken)) == ["parse.invalid_json"]
    assert codes(workspace.update("draft.json", text)) == []


def chain_with_a_far_typo(count):
    """A chain of `count` nodes whose edge into node 4 names `n99`, near no id."""
    ids = ["n%04d" % i for i in range(count)]
    nodes = [{"id": ids[0], "family": "trigger.manual"}]
    edges = []
    for i in range(1, count):
        nodes.append({"id": ids[i], "family": "dataset.retrieve", "config": {"connection": "conn_wh", "query": "select 1"}})
        edges.append({"id": "e%d" % i, "from": {"node": ids[i - 1]}, "to": {"node": "n99" if i == 4 else ids[i]}})
    return json.dumps({
        "format": "workflow-draft/v1", "tenantId": "acme", "workflowId": "wf", "draftId": "d", "revision": 1,
        "catalogVersion": "2026.11", "nodes": nodes, "edges": edges,
    })


def test_a_far_typo_in_a_chain_of_ten_thousand_is_two_diagnostics():
    text = chain_with_a_far_typo(10_000)
    workspace = little.Workspace(**documents(OPTIONS))
    for report in (little.check(text, path="chain.json"), workspace.open("chain.json", text)):
        assert codes(report) == ["graph.dangling_edge", "graph.unreachable_node"]
        warning = next(d for d in report["files"][0]["diagnostics"] if d["code"] == "graph.unreachable_node")
        assert re.match(r"^node `n0004` is unreachable.*and so are the 9995 nodes only it leads to \(the first 100 of the 9995 are listed\)$", warning["message"])
