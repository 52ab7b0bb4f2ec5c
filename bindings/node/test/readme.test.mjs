// The README's "From TypeScript" example, run as written: its fenced block type-checked
// and compiled by tsc, run from the repository, and every `// -> …` it promises printed.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { PACKAGE, REPO, tsc } from './helpers.mjs';

const OUT = path.join(PACKAGE, 'test', '.out', 'readme');

/** The section's ```ts blocks: the checks, then planning. */
function examples() {
  const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('From TypeScript\n'));
  assert.ok(section, 'README.md has a "From TypeScript" section');
  const blocks = [...section.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  assert.equal(blocks.length, 2, 'the section has two ```ts blocks');
  return blocks;
}

/** Compiles a block with tsc and runs it from the repository, checking what it promises. */
function runsAsWritten(code, name) {
  const out = path.join(OUT, name);
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'example.mts'), code);
  const config = { extends: '../../../tsconfig.json', compilerOptions: { noEmit: false }, files: ['example.mts'] };
  writeFileSync(path.join(out, 'tsconfig.json'), JSON.stringify(config, null, 2));
  const compiled = tsc(path.join(out, 'tsconfig.json'));
  assert.equal(compiled.code, 0, compiled.output);
  const run = spawnSync(process.execPath, [path.join(out, 'example.mjs')], { cwd: REPO, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const promised = [...code.matchAll(/\/\/ -> (.*)$/gm)].map((m) => m[1].trim());
  assert.ok(promised.length > 0);
  const printed = run.stdout.split('\n').map((l) => l.trim());
  for (const line of promised) assert.ok(printed.includes(line), `prints ${line}:\n${run.stdout}`);
}

test('the README example runs as written and prints what it says', () => {
  const [code] = examples();
  assert.ok(code.split('\n').filter((l) => l.trim()).length <= 10, 'ten lines');
  runsAsWritten(code, 'check');
});

test("the README's planning example runs as written and prints what it says", () => {
  runsAsWritten(examples()[1], 'plan');
});
