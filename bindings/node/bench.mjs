// A benchmark, not a test: what little in process costs against spawning the CLI, and an
// edit in a Workspace against a fresh check. Prints medians and ratios.
//
//   node bench.mjs            (LITTLE_RELEASE_BIN: the CLI to spawn; default target/release/little,
//                              built with `cargo build --release --bin little` when missing)

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Workspace, check, checkAsync } from '@little-stack/compiler';
import { bigDraft, nodeLine } from './test/big-draft.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');

function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Milliseconds of each of `runs` calls of `call`, after `warmup` unmeasured ones. */
function time(call, runs, warmup = 3) {
  for (let i = 0; i < warmup; i++) call(i);
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    call(i);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(samples);
}

async function timeAsync(call, runs, warmup = 3) {
  for (let i = 0; i < warmup; i++) await call(i);
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await call(i);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return median(samples);
}

const ms = (x) => `${x.toFixed(3)} ms`;
const times = (x) => `${x.toFixed(1)}x`;

const cli = process.env.LITTLE_RELEASE_BIN || path.join(repo, 'target', 'release', 'little');
if (!existsSync(cli)) {
  console.log(`bench: building the release CLI (${cli})`);
  execFileSync('cargo', ['build', '--release', '--bin', 'little'], { cwd: repo, stdio: 'inherit' });
}

// 1. One check of the quarterly report, in process and by spawning the CLI.
{
  const file = 'examples/quarterly-report.json';
  const read = (f) => readFileSync(path.join(repo, f));
  const options = { path: file, context: read('examples/context.json'), bindings: read('examples/bindings.json') };
  const text = read(file);
  const args = ['check', file, '--context', 'examples/context.json', '--bindings', 'examples/bindings.json', '--format', 'json'];
  const spawned = spawnSync(cli, args, { cwd: repo, encoding: 'utf8' });
  if (JSON.stringify(JSON.parse(spawned.stdout)) !== JSON.stringify(check(text, options))) {
    throw new Error('the CLI and the package disagree on the quarterly report');
  }
  const inProcess = time(() => check(text, options), 500, 20);
  const inPool = await timeAsync(() => checkAsync(text, options), 200, 10);
  const spawn = time(() => spawnSync(cli, args, { cwd: repo, encoding: 'utf8' }), 50, 3);
  console.log(`check ${file} (with context and binding rows):`);
  console.log(`  in process, check()         median ${ms(inProcess)} of 500`);
  console.log(`  in process, checkAsync()    median ${ms(inPool)} of 200 (thread pool round trip)`);
  console.log(`  spawning little check       median ${ms(spawn)} of 50 (${path.relative(repo, cli)})`);
  console.log(`  spawn / in process          ${times(spawn / inProcess)}`);
}

// 2. One node edited in a Workspace holding a 10,000-node draft, against a fresh check.
{
  const nodes = 10_000;
  const text = bigDraft(nodes);
  const clean = check(text, { path: 'tree.json' });
  const { errors, warnings } = clean.summary;
  if (errors !== 0 || warnings !== 0 || !clean.files[0].candidate) {
    throw new Error(`the generated draft is not clean: ${JSON.stringify(clean.summary)}`);
  }
  const workspace = new Workspace();
  workspace.open('tree.json', text);
  // Type a character into the title of a node in the middle, then take it out: each
  // update is one edit of one node, and every report stays clean.
  const line = nodeLine(nodes >> 1);
  const character = text.split('\n')[line].indexOf('"title":"') + '"title":"'.length;
  const at = { line, character };
  const typed = [{ range: { start: at, end: at }, text: 'x' }];
  const untyped = [{ range: { start: at, end: { line, character: character + 1 } }, text: '' }];
  const update = (i) => {
    const report = workspace.update('tree.json', i % 2 ? untyped : typed);
    if (report.summary.errors !== 0) throw new Error('an edit of a title broke the draft');
  };
  const fresh = time(() => check(text, { path: 'tree.json' }), 15, 2);
  const edit = time(update, 100, 4);
  const editAsync = await timeAsync(
    (i) => workspace.updateAsync('tree.json', i % 2 ? untyped : typed),
    100,
    4,
  );
  const full = time((i) => {
    update(i);
    workspace.report('tree.json');
  }, 30, 2);
  console.log(`a ${nodes.toLocaleString('en')}-node draft (${(text.length / 1e6).toFixed(1)} MB):`);
  console.log(`  fresh check()                               median ${ms(fresh)} of 15`);
  console.log(`  Workspace.update(), one node edited         median ${ms(edit)} of 100`);
  console.log(`  Workspace.updateAsync(), one node edited    median ${ms(editAsync)} of 100`);
  console.log(`  update() then report() (with the candidate) median ${ms(full)} of 30`);
  console.log(`  fresh check / update                        ${times(fresh / edit)}`);
}
