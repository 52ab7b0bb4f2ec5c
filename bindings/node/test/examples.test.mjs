// Every bundled example checked in process gives what `little check --format json` prints,
// and compile, snapshot, lock, explain, codes, hash and schema give what the CLI gives;
// through the ES module entry and the CommonJS one alike.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import * as little from '@little-stack/compiler';
import { EXAMPLES, cliJson, documents, little as cli, read, readText, sortedJson } from './helpers.mjs';

const require = createRequire(import.meta.url);

for (const [file, flags] of EXAMPLES) {
  test(`check ${file} ${flags.join(' ')} is little check's report`, async () => {
    const expected = sortedJson(cliJson(['check', file, '--format', 'json', ...flags]));
    // The draft as bytes and as text; the documents as bytes, text and parsed objects.
    assert.equal(sortedJson(little.check(read(file), { path: file, ...documents(flags, 'bytes') })), expected);
    assert.equal(sortedJson(little.check(readText(file), { path: file, ...documents(flags, 'text') })), expected);
    const fromObjects = little.check(new Uint8Array(read(file)), { path: file, ...documents(flags, 'object') });
    assert.equal(sortedJson(fromObjects), expected);
    assert.equal(sortedJson(await little.checkAsync(read(file), { path: file, ...documents(flags) })), expected);
  });
}

test('require and import give the same API', () => {
  const cjs = require('@little-stack/compiler');
  const esmDefault = little.default;
  for (const name of ['check', 'checkAsync', 'compile', 'compileAsync', 'explain', 'codes', 'hash', 'schema', 'schemaNames', 'snapshot', 'lock', 'Workspace', 'LittleError']) {
    assert.equal(typeof cjs[name], 'function', name);
    assert.equal(little[name], cjs[name], name);
    assert.equal(esmDefault[name], cjs[name], name);
  }
  const file = 'examples/graph-demo.json';
  assert.deepEqual(cjs.check(read(file), { path: file }), cliJson(['check', file, '--format', 'json']));
});

test('the path defaults to <input>', () => {
  const report = little.check(read('examples/graph-demo.json'));
  assert.equal(report.files[0].path, '<input>');
});

test('compile gives what little compile writes; a blocked draft is a LittleError with its report', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'little-node-'));
  try {
    const out = path.join(dir, 'compiled.json');
    const file = 'examples/quarterly-report.json';
    const flags = ['--context', 'examples/context.json', '--bindings', 'examples/bindings.json'];
    const run = cli(['compile', file, '-o', out, ...flags]);
    assert.equal(run.code, 0, run.stderr);
    const written = sortedJson(JSON.parse(readFileSync(out, 'utf8')));
    assert.equal(sortedJson(little.compile(read(file), { path: file, ...documents(flags) })), written);
    assert.equal(sortedJson(await little.compileAsync(read(file), { path: file, ...documents(flags) })), written);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const cycle = 'examples/cycle.json';
  const blocked = (error) => {
    assert.ok(error instanceof little.LittleError && error instanceof Error);
    assert.equal(error.name, 'LittleError');
    assert.equal(error.code, 'blocked');
    assert.equal(error.path, cycle);
    assert.deepEqual(error.report, little.check(read(cycle), { path: cycle }));
    assert.ok(error.report.files[0].diagnostics.some((d) => d.code === 'graph.cycle'));
    return true;
  };
  assert.throws(() => little.compile(read(cycle), { path: cycle }), blocked);
  await assert.rejects(little.compileAsync(read(cycle), { path: cycle }), blocked);
  const lwir = 'examples/lwir/summarize-ticket.lwir.json';
  assert.throws(() => little.compile(read(lwir), { path: lwir }), { code: 'document.kind', path: lwir });
});

test('snapshot and lock give what the CLI gives, from text or objects', () => {
  const definition = 'examples/support-summarize-ticket/definition.json';
  const lwir = 'examples/support-summarize-ticket/lwir.json';
  const snapshot = cliJson(['snapshot', definition]);
  assert.equal(sortedJson(little.snapshot(read(definition))), sortedJson(snapshot));
  assert.equal(sortedJson(little.snapshot(JSON.parse(readText(definition)))), sortedJson(snapshot));
  const lock = sortedJson(cliJson(['lock', lwir, '--definition', definition]));
  assert.equal(sortedJson(little.lock(readText(lwir), read(definition))), lock);
  assert.equal(sortedJson(little.lock(JSON.parse(readText(lwir)), JSON.parse(readText(definition)))), lock);
  assert.throws(() => little.lock(read('examples/lwir/faulty-plan.lwir.json'), read(definition)), (error) => {
    assert.equal(error.code, 'blocked');
    assert.equal(error.path, 'lwir');
    assert.equal(error.report.format, 'little-report/v1');
    return true;
  });
});

test('explain, codes, hash and schema are the CLI s', () => {
  assert.equal(little.explain('graph.cycle'), cli(['explain', 'graph.cycle']).stdout);
  assert.throws(() => little.explain('graph.cycel'), (error) => {
    assert.equal(error.code, 'code.unknown');
    assert.match(error.message, /did you mean `graph\.cycle`\?/);
    return true;
  });
  const codes = little.codes();
  assert.equal(codes.length, cli(['explain']).stdout.trim().split('\n').length);
  assert.deepEqual(Object.keys(codes[0]), ['code', 'severity', 'blocking', 'summary']);
  assert.equal(codes[0].code, 'parse.invalid_json');
  const file = 'examples/quarterly-report.json';
  const expected = cli(['hash', file]).stdout.trim();
  assert.equal(little.hash(read(file)), expected);
  assert.equal(little.hash(readText(file)), expected);
  assert.equal(little.hash(JSON.parse(readText(file))), expected);
  assert.throws(() => little.hash('{ "a": '), { code: 'json.invalid' });
  assert.deepEqual(little.schema('draft'), JSON.parse(cli(['schema', 'draft']).stdout));
  assert.throws(() => little.schema('drafts'), { code: 'schema.unknown' });
  assert.ok(little.schemaNames().includes('definition'));
});
