// index.d.ts (by hand) and types.d.ts (generated from the schemas of what little writes,
// by bindings/typegen) are held here to what little gives. The real output of
// every example (reports, candidates, compiled documents, codes, snapshot, lock, a
// workspace's reports, a session's events) is written out as typed literals, where TypeScript refuses a
// missing, extra or mistyped field, and type-checked with test/usage.mts and usage.cts,
// which use the API as programs would.

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import * as little from '@little-stack/compiler';
import { EXAMPLES, PACKAGE, documents, read, readText, tsc } from './helpers.mjs';

const OUT = path.join(PACKAGE, 'test', '.out', 'types');

function outputs() {
  const lines = ["import type * as L from '@little-stack/compiler';", ''];
  let n = 0;
  const typed = (type, value, expectError) => {
    if (expectError) lines.push(`// @ts-expect-error: ${expectError}`);
    // On one line, where the directive above it covers the error wherever it falls.
    const json = expectError ? JSON.stringify(value) : JSON.stringify(value, null, 1);
    lines.push(`export const v${n++}: ${type} = ${json};`);
  };
  for (const [file, flags] of EXAMPLES) {
    const options = { path: file, ...documents(flags) };
    const report = little.check(read(file), options);
    typed('L.Report', report);
    const { document, candidate } = report.files[0];
    if (candidate) typed(document === 'lwir' ? 'L.WorkflowVersion' : 'L.DraftCandidate', candidate);
    if (document === 'draft') {
      try {
        typed('L.Compiled', little.compile(read(file), options));
      } catch (error) {
        assert.equal(error.code, 'blocked');
        typed('L.Report', error.report);
      }
    }
  }
  typed('L.CodeInfo[]', little.codes());
  const definition = read('examples/support-summarize-ticket/definition.json');
  typed('L.DefinitionSnapshot', little.snapshot(definition));
  typed('L.Registration', little.lock(read('examples/support-summarize-ticket/lwir.json'), definition));
  typed('L.JsonObject', little.schema('draft'));
  const workspace = new little.Workspace(documents(['--context', 'examples/context.json']));
  typed('L.Report', workspace.open('a.json', readText('examples/broken-wiring.json')));
  typed('L.Report', workspace.report('a.json'));

  // Events of every kind and shape, as real sessions wrote them (the Rust tests hold every
  // event their sessions write to the schema these types come from).
  const logged = readText('embed/tests/fixtures/events.jsonl').trim().split('\n').map((line) => JSON.parse(line));
  for (const event of logged) typed(event.seq === undefined ? 'L.PlannerEvent' : 'L.StoredEvent', event);
  const registered = logged.find((e) => e.type === 'WorkflowVersionRegistered');
  typed('L.StoredEvent', { ...registered, payload: { ...registered.payload, extra: 1 } }, 'a payload field little does not write');
  typed('L.StoredEvent', { ...registered, type: 'RunFailed' }, "a kind with another kind's payload");
  const text = logged.find((e) => e.type === 'harness.model.text');
  typed('L.StoredEvent', text, 'the streamed text is heard, never stored');

  // The declarations are strict enough to refuse output that is not little's.
  const report = little.check(read('examples/cycle.json'));
  const [diagnostic] = report.files[0].diagnostics;
  typed('L.Report', { ...report, extra: 1 }, 'a field little does not write');
  typed('L.Diagnostic', { ...diagnostic, nodeId: null }, 'an absent field is absent, not null');
  typed('L.Diagnostic', { ...diagnostic, severity: 'fatal' }, 'a severity little has not');
  const { topologyHash, ...partial } = little.check(read('examples/quarterly-report.json'), documents(['--context', 'examples/context.json'])).files[0].candidate;
  assert.ok(topologyHash);
  typed('L.DraftCandidate', partial, 'a candidate without its topologyHash');
  return `${lines.join('\n')}\n`;
}

test('the declarations type the real output and the usage files', () => {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(path.join(OUT, 'outputs.mts'), outputs());
  const config = {
    extends: '../../tsconfig.json',
    files: ['outputs.mts', '../../usage.mts', '../../usage.cts'],
  };
  writeFileSync(path.join(OUT, 'tsconfig.json'), JSON.stringify(config, null, 2));
  const run = tsc(path.join(OUT, 'tsconfig.json'));
  assert.equal(run.code, 0, run.output);
});
