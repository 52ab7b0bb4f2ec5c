"""A generated valid draft of any size, for the GIL test and bench.py."""

import json
from typing import List


def draft(nodes: int, workflow: str = "reports.generated") -> str:
    """A ``workflow-draft/v1`` of ``nodes`` nodes that checks clean against the default
    catalog and no context: one ``trigger.manual``, then a binary tree of
    ``dataset.retrieve`` and ``notify.email`` nodes, each fed from its parent. One node or
    edge a line, as an editor would show it."""
    lines: List[str] = []
    edges: List[str] = []
    ports = ["out"]
    ids = ["start"]
    lines.append(json.dumps({"id": "start", "family": "trigger.manual", "title": "Run by hand", "config": {}}))
    for i in range(1, nodes):
        parent = (i - 1) // 2
        if i % 2:
            node = {
                "id": f"fetch_{i}",
                "family": "dataset.retrieve",
                "title": f"Fetch batch {i}",
                "config": {"connection": "conn_wh", "query": f"select region, revenue from sales where batch = {i}"},
                "position": {"x": 280 * i.bit_length(), "y": 140 * i},
            }
            ports.append("dataset")
        else:
            node = {
                "id": f"mail_{i}",
                "family": "notify.email",
                "title": f"Email batch {i}",
                "config": {"sender": "reports@acme.example", "to": ["finance@acme.example"], "subject": f"Batch {i}"},
                "position": {"x": 280 * i.bit_length(), "y": 140 * i},
            }
            ports.append("out")
        ids.append(str(node["id"]))
        lines.append(json.dumps(node))
        edge = {"id": f"e{i}", "from": {"node": ids[parent], "port": ports[parent]}, "to": {"node": ids[i], "port": "in"}}
        edges.append(json.dumps(edge))
    header = {
        "format": "workflow-draft/v1",
        "tenantId": "acme",
        "workflowId": workflow,
        "draftId": "drf_gen",
        "revision": 1,
        "catalogVersion": "2026.11",
    }
    head = json.dumps(header)[:-1]
    return head + ',\n  "nodes": [\n    ' + ",\n    ".join(lines) + '\n  ],\n  "edges": [\n    ' + ",\n    ".join(edges) + "\n  ]\n}\n"
