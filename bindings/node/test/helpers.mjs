// What the tests share: the repository, the `little` binary to compare with, the bundled
// examples and a JSON form that compares values whatever the order of their keys.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const REPO = path.resolve(PACKAGE, '../..');

let bin;
/** `$LITTLE_BIN`, or the workspace's debug binary, built when it is missing. */
export function littleBin() {
  if (bin) return bin;
  bin = process.env.LITTLE_BIN || path.join(REPO, 'target', 'debug', 'little');
  if (!existsSync(bin)) {
    if (process.env.LITTLE_BIN) throw new Error(`LITTLE_BIN=${bin} does not exist`);
    execFileSync('cargo', ['build', '--bin', 'little'], { cwd: REPO, stdio: ['ignore', 2, 2] });
  }
  return bin;
}

/** Runs `little` in the repository. */
export function little(args) {
  const run = spawnSync(littleBin(), args, { cwd: REPO, encoding: 'utf8', maxBuffer: 1 << 30 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** What `little ARGS` prints as JSON (exit 0 or 1). */
export function cliJson(args) {
  const run = little(args);
  assert.ok(run.code === 0 || run.code === 1, `little ${args.join(' ')}: exit ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** JSON.stringify with the keys of every object sorted. */
export function sortedJson(value) {
  return JSON.stringify(value, (_, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]))
      : v,
  );
}

/** Runs the package's tsc on a project: its exit code and output. */
export function tsc(project) {
  const bin = path.join(PACKAGE, 'node_modules', '.bin', process.platform === 'win32' ? 'tsc.cmd' : 'tsc');
  const run = spawnSync(bin, ['-p', project], { encoding: 'utf8' });
  return { code: run.status, output: `${run.stdout}${run.stderr}` };
}

export function read(file) {
  return readFileSync(path.join(REPO, file));
}

export function readText(file) {
  return readFileSync(path.join(REPO, file), 'utf8');
}

/** Every example, with the documents it is checked with (as in tests/embed.rs). */
export const EXAMPLES = [
  ['examples/quarterly-report.json', ['--context', 'examples/context.json', '--bindings', 'examples/bindings.json']],
  ['examples/broken-wiring.json', ['--context', 'examples/context.json']],
  ['examples/broken-wiring.json', []],
  ['examples/contract-mismatch.json', ['--context', 'examples/context.json', '--bindings', 'examples/bindings.json']],
  ['examples/cycle.json', ['--context', 'examples/context.json']],
  ['examples/graph-demo.json', []],
  ['examples/support-triage.json', ['--context', 'examples/context.json']],
  ['examples/lwir/summarize-ticket.lwir.json', ['--snapshot', 'examples/lwir/snapshot.json']],
  ['examples/lwir/faulty-plan.lwir.json', ['--snapshot', 'examples/lwir/snapshot.json']],
  ['examples/lwir/summarize-ticket.lwir.json', []],
];

/**
 * The options of a check with the documents of `flags` (`--context FILE` …), each handed
 * in as `form` gives it: `bytes` (a Buffer), `text` or `object` (parsed).
 */
export function documents(flags, form = 'bytes') {
  const options = {};
  for (let i = 0; i < flags.length; i += 2) {
    const name = flags[i].slice(2);
    const file = flags[i + 1];
    options[name] = form === 'bytes' ? read(file) : form === 'text' ? readText(file) : JSON.parse(readText(file));
  }
  return options;
}

/** The README's "From TypeScript" ```ts blocks, as written: the checks, then planning. */
export function readmeExamples() {
  const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('From TypeScript\n'));
  assert.ok(section, 'README.md has a "From TypeScript" section');
  const blocks = [...section.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  assert.equal(blocks.length, 2, 'the section has two ```ts blocks');
  return { check: blocks[0], plan: blocks[1] };
}

/**
 * Writes a README block to `folder` as example.mts, compiles it with the package's tsc
 * (the strict settings of test/tsconfig.json; `@little-stack/compiler` resolved from
 * `folder` up, as in a user's project), runs it in `cwd` and checks that it prints every
 * `// -> …` line it promises.
 */
export function runsAsWritten(code, { folder, cwd, env = process.env }) {
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, 'example.mts'), code);
  const config = {
    extends: path.join(PACKAGE, 'test', 'tsconfig.json'),
    // The @types/node of the package's dev dependencies, wherever `folder` is.
    compilerOptions: { noEmit: false, typeRoots: [path.join(PACKAGE, 'node_modules', '@types')] },
    files: ['example.mts'],
  };
  writeFileSync(path.join(folder, 'tsconfig.json'), JSON.stringify(config, null, 2));
  const compiled = tsc(path.join(folder, 'tsconfig.json'));
  assert.equal(compiled.code, 0, compiled.output);
  const run = spawnSync(process.execPath, [path.join(folder, 'example.mjs')], { cwd, env, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const promised = [...code.matchAll(/\/\/ -> (.*)$/gm)].map((m) => m[1].trim());
  assert.ok(promised.length > 0, 'the example says what it prints');
  const printed = run.stdout.split('\n').map((l) => l.trim());
  for (const line of promised) assert.ok(printed.includes(line), `prints ${line}:\n${run.stdout}`);
}
