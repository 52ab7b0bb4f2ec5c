// Hostile input gives a report or a LittleError, and node lives on: bytes that are not
// UTF-8, 200,000-deep nesting, a 50 MB string, documents that are not JSON, and values
// that are not JSON at all (functions, symbols, bigints, holes, cycles…), refused by path.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { LittleError, Workspace, check, checkAsync, hash, lock, snapshot } from '@little-stack/compiler';
import { read, readText } from './helpers.mjs';

function refused(code, path, message) {
  return (error) => {
    assert.ok(error instanceof LittleError, `${error}`);
    assert.equal(error.code, code);
    assert.equal(error.path, path);
    if (message) assert.match(error.message, message);
    return true;
  };
}

test('bytes that are not UTF-8 reach little s parse.invalid_json', async () => {
  const bytes = Buffer.from('{"format": "\xff"}', 'latin1');
  const report = check(bytes, { path: 'bytes.json' });
  assert.equal(report.files[0].diagnostics[0].code, 'parse.invalid_json');
  assert.equal(report.files[0].document, null);
  assert.deepEqual(await checkAsync(new Uint8Array(bytes), { path: 'bytes.json' }), report);
  assert.throws(() => check(read('examples/graph-demo.json'), { catalog: bytes }), refused('input.invalid', 'catalog'));
  assert.throws(() => hash(bytes), refused('json.invalid', null));
});

test('200,000-deep nesting is a report, as text and as a document', () => {
  const deep = '['.repeat(200_000) + ']'.repeat(200_000);
  const report = check(deep, { path: 'deep.json' });
  assert.ok(report.summary.errors >= 1);
  assert.throws(() => check('{}', { context: deep }), refused('input.invalid', 'context'));
  // As a JavaScript value: walked without recursion, then refused as too deep to write.
  let value = [];
  for (let i = 0; i < 200_000; i++) value = [value];
  assert.throws(() => snapshot(value), refused('input.invalid', 'definition', /cannot be written as JSON/));
});

test('a 50 MB string is a report', async () => {
  const long = `{"format": "${'x'.repeat(50 << 20)}"}`;
  // little takes some 25 s over this value (its diagnostic quotes it whole, the CLI's too):
  // the check and the workspace's open run side by side on the thread pool.
  const workspace = new Workspace();
  const [checked, opened] = await Promise.all([checkAsync(long, { path: 'long.json' }), workspace.openAsync('long.json', long)]);
  assert.equal(checked.files[0].diagnostics[0].code, 'parse.unsupported_format');
  assert.deepEqual(opened.files[0].diagnostics, checked.files[0].diagnostics);
});

test('documents that are not JSON or not of their kind are LittleErrors naming the option', () => {
  const draft = read('examples/graph-demo.json');
  assert.throws(() => check(draft, { catalog: 'not json' }), refused('input.invalid', 'catalog'));
  assert.throws(() => check(draft, { bindings: '{"format": "nope"}' }), refused('input.invalid', 'bindings'));
  assert.throws(() => snapshot('{'), refused('blocked', 'definition'));
  assert.throws(() => lock('[]', read('examples/support-summarize-ticket/definition.json')), refused('blocked', 'lwir'));
  assert.throws(() => check(42), refused('input.invalid', 'text'));
  assert.throws(() => check({ format: 'workflow-draft/v1' }), refused('input.invalid', 'text'));
  assert.throws(() => check(draft, { path: 7 }), refused('input.invalid', 'path'));
  assert.throws(() => check(draft, 'options'), refused('input.invalid', 'options'));
});

test('values that are not JSON are refused, naming their path', () => {
  const definition = JSON.parse(readText('examples/support-summarize-ticket/definition.json'));
  const withTool = (tool) => ({ ...definition, tools: [tool] });
  const cases = [
    [withTool({ id: 't', execute: () => 1 }), 'definition.tools[0].execute', /is a function/],
    [withTool({ id: 't', execute() {} }), 'definition.tools[0].execute', /is a function/],
    [withTool({ id: Symbol('t') }), 'definition.tools[0].id', /symbol/],
    [withTool({ id: 't', limit: 10n }), 'definition.tools[0].limit', /bigint/],
    [withTool({ id: 't', tags: ['a', undefined] }), 'definition.tools[0].tags[1]', /undefined/],
    // eslint-disable-next-line no-sparse-arrays
    [withTool({ id: 't', tags: ['a', , 'b'] }), 'definition.tools[0].tags[1]', /hole/],
    [withTool({ id: 't', weight: NaN }), 'definition.tools[0].weight', /NaN/],
    [withTool({ id: 't', 'odd key': Infinity }), 'definition.tools[0]["odd key"]', /Infinity/],
    [withTool({ id: 't', seen: new Map() }), 'definition.tools[0].seen', /a Map, not a plain object/],
    [withTool({ id: 't', at: new Date(0) }), 'definition.tools[0].at', /a Date/],
    [withTool(new (class Tool {})()), 'definition.tools[0]', /a Tool/],
  ];
  for (const [value, path, message] of cases) {
    assert.throws(() => snapshot(value), refused('input.invalid', path, message), path);
  }
  const cycle = { ...definition, tools: [{ id: 't' }] };
  cycle.tools[0].self = cycle;
  assert.throws(() => snapshot(cycle), refused('input.invalid', 'definition.tools[0].self', /cycle: it refers back to definition$/));
  // Shared (not cyclic) values are fine; undefined object members are left out, as JSON.stringify leaves them.
  const shared = { type: 'string' };
  const plain = { ...definition, description: undefined, inputSchema: { type: 'object', properties: { a: shared, b: shared } } };
  assert.equal(typeof snapshot(plain).inputSchemaHash, 'string');
  // Every API that takes documents refuses the same way.
  assert.throws(() => check('{}', { context: { grants: [() => 1] } }), refused('input.invalid', 'context.grants[0]'));
  assert.throws(() => new Workspace({ catalog: { families: [{ configSchema: { check: () => 1 } }] } }), refused('input.invalid', 'catalog.families[0].configSchema.check'));
  assert.throws(() => lock({ steps: [{ run: async () => 1 }] }, definition), refused('input.invalid', 'lwir.steps[0].run'));
  assert.throws(() => hash({ a: 1n }), refused('input.invalid', 'document.a'));
});

test('node is still here', () => {
  assert.equal(check(read('examples/graph-demo.json')).summary.files, 1);
});

test('a refusal names the kind of value with its article', () => {
  assert.throws(() => check(undefined), /not an undefined$/);
  assert.throws(() => check(42), /not a number$/);
  assert.throws(() => check(new Object()), /not an Object$/);
});
