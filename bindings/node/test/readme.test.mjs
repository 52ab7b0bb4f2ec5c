// The README's "From TypeScript" examples, run as written: each fenced block type-checked
// and compiled by tsc, run from the repository, and every `// -> …` it promises printed.
// (packed.test.mjs runs them again from the packed tarballs installed in a fresh project.)

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { PACKAGE, REPO, readmeExamples, runsAsWritten } from './helpers.mjs';

const OUT = path.join(PACKAGE, 'test', '.out', 'readme');

test('the README example runs as written and prints what it says', () => {
  const { check } = readmeExamples();
  assert.ok(check.split('\n').filter((l) => l.trim()).length <= 10, 'ten lines');
  runsAsWritten(check, { folder: path.join(OUT, 'check'), cwd: REPO });
});

test("the README's planning example runs as written and prints what it says", () => {
  runsAsWritten(readmeExamples().plan, { folder: path.join(OUT, 'plan'), cwd: REPO });
});
