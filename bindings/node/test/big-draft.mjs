// A valid draft of `nodes` nodes for the benchmark and the tests: one manual trigger and a
// binary tree of warehouse queries and chat messages below it, one node per line so that
// an edit of one node is an edit of one line.

/** The draft's text: node `n` is alone on line `nodeLine(n)`. */
export function bigDraft(nodes) {
  const lines = [
    '{',
    '  "format": "workflow-draft/v1",',
    '  "tenantId": "acme",',
    '  "workflowId": "bench.tree",',
    '  "draftId": "drf_bench",',
    '  "revision": 1,',
    '  "catalogVersion": "2026.11",',
    '  "nodes": [',
  ];
  const out = (i) => (i === 0 ? 'out' : i % 2 === 1 ? 'dataset' : 'out');
  for (let i = 0; i < nodes; i++) {
    const node =
      i === 0
        ? { id: 'n0', family: 'trigger.manual', title: 'Start' }
        : i % 2 === 1
          ? { id: `n${i}`, family: 'dataset.retrieve', title: `Query ${i}`, config: { connection: 'conn_wh', query: `select ${i}` } }
          : { id: `n${i}`, family: 'notify.chat', title: `Message ${i}`, config: { connection: 'conn_chat', channel: `#c${i}` } };
    lines.push(`    ${JSON.stringify(node)}${i + 1 < nodes ? ',' : ''}`);
  }
  lines.push('  ],', '  "edges": [');
  for (let i = 1; i < nodes; i++) {
    const parent = (i - 1) >> 1;
    const edge = { id: `e${i}`, from: { node: `n${parent}`, port: out(parent) }, to: { node: `n${i}`, port: 'in' } };
    lines.push(`    ${JSON.stringify(edge)}${i + 1 < nodes ? ',' : ''}`);
  }
  lines.push('  ]', '}', '');
  return lines.join('\n');
}

/** The 0-based line of node `n`. */
export function nodeLine(n) {
  return 8 + n;
}
