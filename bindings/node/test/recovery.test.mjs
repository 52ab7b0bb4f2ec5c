// The editor's recovery through the package's Workspace: a bare word typed into the first
// example is the parse fault and nothing else (it once reported four untouched nodes
// missing), and one far-off typo in a chain of 10,000 nodes is two diagnostics.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Workspace, check } from '@little-stack/compiler';
import { documents, readText } from './helpers.mjs';

const FLAGS = ['--context', 'examples/context.json', '--bindings', 'examples/bindings.json'];

/** The codes of a report's errors and warnings, sorted. */
function faults(report) {
  return report.files[0].diagnostics.filter((d) => d.severity !== 'info').map((d) => d.code).sort();
}

test('a bare word typed over the send node\'s config line is the parse fault alone', () => {
  const text = readText('examples/quarterly-report.json');
  const line = '      "config": { "sender": "mail_ops"';
  assert.ok(text.includes(line));
  const broken = text.replace(line, `inn${line.slice(2)}`);
  const workspace = new Workspace(documents(FLAGS));
  assert.deepEqual(faults(workspace.open('draft.json', text)), []);
  assert.deepEqual(faults(workspace.update('draft.json', broken)), ['parse.invalid_json']);
  assert.deepEqual(faults(workspace.update('draft.json', text)), []);
});

/** A chain of `count` nodes whose edge into node 4 names `n99`, near no id. */
function chainWithAFarTypo(count) {
  const id = (i) => `n${String(i).padStart(4, '0')}`;
  const nodes = [{ id: id(0), family: 'trigger.manual' }];
  const edges = [];
  for (let i = 1; i < count; i++) {
    nodes.push({ id: id(i), family: 'dataset.retrieve', config: { connection: 'conn_wh', query: 'select 1' } });
    edges.push({ id: `e${i}`, from: { node: id(i - 1) }, to: { node: i === 4 ? 'n99' : id(i) } });
  }
  return JSON.stringify({
    format: 'workflow-draft/v1', tenantId: 'acme', workflowId: 'wf', draftId: 'd', revision: 1,
    catalogVersion: '2026.11', nodes, edges,
  });
}

test('a far typo in a chain of ten thousand is two diagnostics, in check and in a Workspace', () => {
  const text = chainWithAFarTypo(10_000);
  const workspace = new Workspace(documents(FLAGS));
  for (const report of [check(text, { path: 'chain.json' }), workspace.open('chain.json', text)]) {
    assert.deepEqual(faults(report), ['graph.dangling_edge', 'graph.unreachable_node']);
    const warning = report.files[0].diagnostics.find((d) => d.code === 'graph.unreachable_node');
    assert.match(warning.message, /^node `n0004` is unreachable.*and so are the 9995 nodes only it leads to \(the first 100 of the 9995 are listed\)$/);
  }
});
