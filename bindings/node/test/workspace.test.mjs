// A Workspace session: open a draft, type a fault, see it, fix it, see it go, close it;
// edits counted in UTF-16 columns; the asynchronous calls, in the order they were made.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { LittleError, Workspace, check, checkAsync } from '@little-stack/compiler';
import { bigDraft, nodeLine } from './big-draft.mjs';
import { cliJson, documents, readText } from './helpers.mjs';

const FLAGS = ['--context', 'examples/context.json', '--bindings', 'examples/bindings.json'];
const DRAFT = readText('examples/quarterly-report.json');

/** The codes of a report's errors and warnings. */
function faults(report) {
  return report.files[0].diagnostics.filter((d) => d.severity !== 'info').map((d) => d.code);
}

/** An insertion at the first family's name, and the edit that takes it out again. */
function familyTypo(text) {
  const lines = text.split('\n');
  const line = lines.findIndex((l) => l.includes('"family": "'));
  const character = lines[line].indexOf('"family": "') + '"family": "'.length;
  const at = { line, character };
  return {
    type: [{ range: { start: at, end: at }, text: 'x' }],
    fix: [{ range: { start: at, end: { line, character: character + 1 } }, text: '' }],
  };
}

test('a draft is opened, broken by an edit, fixed and closed', () => {
  const workspace = new Workspace(documents(FLAGS));
  const opened = workspace.open('demo.json', DRAFT);
  assert.equal(opened.format, 'little-report/v1');
  assert.equal(opened.files[0].path, 'demo.json');
  assert.equal(opened.files[0].candidate, null, 'open gives diagnostics only');
  assert.deepEqual(faults(opened), []);
  const { type, fix } = familyTypo(DRAFT);
  assert.deepEqual(faults(workspace.update('demo.json', type)), ['catalog.unknown_family']);
  assert.deepEqual(faults(workspace.update('demo.json', fix)), []);
  assert.equal(workspace.text('demo.json'), DRAFT);
  // The full report has the candidate the CLI gives for the same text.
  const cli = cliJson(['check', 'examples/quarterly-report.json', '--format', 'json', ...FLAGS]);
  assert.ok(cli.files[0].candidate);
  assert.deepEqual(workspace.report('demo.json').files[0].candidate, cli.files[0].candidate);
  assert.deepEqual(workspace.paths(), ['demo.json']);
  workspace.close('demo.json');
  assert.deepEqual(workspace.paths(), []);
  assert.equal(workspace.text('demo.json'), undefined);
  for (const call of [() => workspace.update('demo.json', DRAFT), () => workspace.report('demo.json'), () => workspace.close('demo.json')]) {
    assert.throws(call, (error) => {
      assert.ok(error instanceof LittleError);
      assert.equal(error.code, 'file.unknown');
      assert.equal(error.path, 'demo.json');
      return true;
    });
  }
});

test('the whole text replaces a document; a report is what check gives the same text', () => {
  const workspace = new Workspace();
  workspace.open('a.json', '{}');
  const report = workspace.update('a.json', DRAFT);
  const expected = check(DRAFT, { path: 'a.json' });
  assert.deepEqual(report.files[0].diagnostics, expected.files[0].diagnostics);
  assert.deepEqual(workspace.report('a.json'), expected);
});

test('columns are UTF-16 code units, as in a JavaScript string', () => {
  const workspace = new Workspace(documents(FLAGS));
  // A title with characters outside the BMP (two code units each) before the edit point.
  const text = DRAFT.replace('"title": "Fetch sales"', '"title": "Fetch 😀 sales 𝄞"');
  workspace.open('u.json', text);
  const lines = text.split('\n');
  const line = lines.findIndex((l) => l.includes('𝄞'));
  const character = lines[line].indexOf('𝄞"') + '𝄞'.length; // just before the closing quote
  const at = { line, character };
  workspace.update('u.json', [{ range: { start: at, end: at }, text: '!' }]);
  const offset = text.split('\n').slice(0, line).join('\n').length + 1 + character;
  assert.equal(workspace.text('u.json'), text.slice(0, offset) + '!' + text.slice(offset));
});

test('edits are checked: shape, order, and a workspace whose documents cannot be used', () => {
  const workspace = new Workspace();
  workspace.open('a.json', DRAFT);
  const backwards = [{ range: { start: { line: 2, character: 0 }, end: { line: 1, character: 0 } }, text: '' }];
  assert.throws(() => workspace.update('a.json', backwards), { code: 'edit.invalid', path: 'a.json' });
  const negative = [{ range: { start: { line: -1, character: 0 }, end: { line: 0, character: 0 } }, text: '' }];
  assert.throws(() => workspace.update('a.json', negative), { code: 'edit.invalid', path: 'edits[0].range.start.line' });
  assert.throws(() => workspace.update('a.json', [{ range: { start: { line: 0, character: 0 } }, text: '' }]), {
    code: 'edit.invalid',
    path: 'edits[0].range.end',
  });
  assert.throws(() => workspace.update('a.json', 42), { code: 'edit.invalid' });
  assert.equal(workspace.text('a.json'), DRAFT, 'a refused edit changes nothing');
  assert.throws(() => new Workspace({ catalog: 'not json' }), { code: 'input.invalid', path: 'catalog' });
  assert.throws(() => new Workspace({ contxt: '{}' }), { code: 'input.invalid', path: 'options.contxt', message: /did you mean `context`/ });
});

test('the asynchronous calls give the same reports, in the order they were made', async () => {
  const workspace = new Workspace(documents(FLAGS));
  assert.deepEqual(faults(await workspace.openAsync('demo.json', DRAFT)), []);
  const { type, fix } = familyTypo(DRAFT);
  // Made one after the other without waiting: the fix must come after the typo.
  const typed = workspace.updateAsync('demo.json', type);
  const fixed = workspace.updateAsync('demo.json', fix);
  assert.deepEqual(faults(await typed), ['catalog.unknown_family']);
  assert.deepEqual(faults(await fixed), []);
  // A synchronous call made after an asynchronous one sees its edit.
  const pending = workspace.updateAsync('demo.json', type);
  assert.deepEqual(faults(workspace.update('demo.json', fix)), []);
  assert.deepEqual(faults(await pending), ['catalog.unknown_family']);
  assert.equal(workspace.text('demo.json'), DRAFT);
  const full = await workspace.reportAsync('demo.json');
  assert.deepEqual(full, workspace.report('demo.json'));
  assert.ok(full.files[0].candidate);
  workspace.close('demo.json');
  await assert.rejects(workspace.updateAsync('demo.json', DRAFT), (error) => {
    assert.ok(error instanceof LittleError);
    assert.equal(error.code, 'file.unknown');
    return true;
  });
  await assert.rejects(workspace.updateAsync('demo.json', 'x'.repeat(3).split('')), { code: 'edit.invalid' });
});

test('many asynchronous edits, each at a position the one before made, apply in order', async () => {
  const workspace = new Workspace();
  workspace.open('a.json', '{}');
  const digits = Array.from({ length: 60 }, (_, i) => String(i % 10));
  const updates = digits.map((digit, i) => {
    const at = { line: 0, character: 1 + i };
    return workspace.updateAsync('a.json', [{ range: { start: at, end: at }, text: digit }]);
  });
  await Promise.all(updates);
  assert.equal(workspace.text('a.json'), `{${digits.join('')}}`);
});

test('checkAsync and updateAsync run off the event loop', async () => {
  const draft = bigDraft(10_000);
  // While the pool checks, the event loop goes on turning.
  let turns = 0;
  let turning = true;
  const spin = () => {
    turns++;
    if (turning) setImmediate(spin);
  };
  setImmediate(spin);
  const report = await checkAsync(draft, { path: 'big.json' });
  assert.equal(report.summary.errors, 0);
  assert.ok(turns > 1, `the event loop turned ${turns} times during checkAsync`);
  const workspace = new Workspace();
  workspace.open('big.json', draft);
  const line = nodeLine(5000);
  const start = draft.split('\n')[line].indexOf('"family":"') + '"family":"'.length;
  const at = { line, character: start };
  const updated = await workspace.updateAsync('big.json', [{ range: { start: at, end: at }, text: 'x' }]);
  turning = false;
  assert.deepEqual(faults(updated), ['catalog.unknown_family']);
});
