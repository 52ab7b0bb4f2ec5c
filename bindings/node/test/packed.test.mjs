// The npm package as it is published: `npm pack` of the main package and of this
// platform's package (pack.mjs), both tarballs installed into a fresh project with npm
// offline (nothing of ours can come from the registry), and the README's examples run
// there as written, the addon loaded from the platform package.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';

import { PACKAGE, REPO, readmeExamples, runsAsWritten } from './helpers.mjs';

const MAX_ADDON_BYTES = 25 * 1024 * 1024;

function mib(bytes) {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The paths inside a tarball. */
function entries(tarball) {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

function packedManifest(tarball) {
  return JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
}

test('the packed tarballs, installed into a fresh project, run the README examples', (t) => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'little-npm-'));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));

  const packed = JSON.parse(
    execFileSync(process.execPath, [path.join(PACKAGE, 'pack.mjs'), path.join(scratch, 'tarballs')], { encoding: 'utf8' }),
  );
  const [main, ...platforms] = packed;
  assert.equal(main.name, '@little-stack/compiler');
  const platform = platforms.find((p) => p.name === '@little-stack/compiler-linux-x64-gnu');
  assert.ok(platform, `a linux-x64-gnu package among ${packed.map((p) => p.name).join(', ')}`);

  // What ships is stripped and small.
  t.diagnostic(`${platform.addon}: ${mib(platform.addonBytes)} (${platform.addonBytes} bytes)`);
  assert.ok(platform.addonBytes <= MAX_ADDON_BYTES, `${platform.addon} is ${mib(platform.addonBytes)}, over 25 MiB`);
  assert.deepEqual(entries(platform.tarball).sort(), ['package/README.md', `package/${platform.addon}`, 'package/package.json']);

  // The main package: public, no addon of its own, an optional dependency per platform.
  const manifest = packedManifest(main.tarball);
  assert.equal(manifest.private, undefined, 'the main package is not private');
  assert.deepEqual(manifest.optionalDependencies, Object.fromEntries(platforms.map((p) => [p.name, manifest.version])));
  const files = entries(main.tarball);
  assert.deepEqual(files.filter((f) => f.endsWith('.node')), [], 'the main package holds no addon');
  for (const file of ['index.cjs', 'index.mjs', 'index.d.ts', 'types.d.ts', 'README.md']) {
    assert.ok(files.includes(`package/${file}`), `the main package holds ${file}`);
  }
  const platformManifest = packedManifest(platform.tarball);
  assert.deepEqual([platformManifest.os, platformManifest.cpu, platformManifest.libc], [['linux'], ['x64'], ['glibc']]);

  // A user's project: both tarballs installed, npm offline.
  const project = path.join(scratch, 'project');
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', main.tarball, platform.tarball], {
    cwd: project,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const installed = path.join(project, 'node_modules', '@little-stack');
  assert.ok(existsSync(path.join(installed, 'compiler-linux-x64-gnu', platform.addon)));
  assert.ok(!existsSync(path.join(installed, 'compiler', platform.addon)), 'no addon next to the main package');

  // The README's examples read examples/ and write target/ in the folder they run in.
  cpSync(path.join(REPO, 'examples'), path.join(project, 'examples'), { recursive: true });
  mkdirSync(path.join(project, 'target'));
  const env = { ...process.env };
  delete env.LITTLE_NODE_ADDON;
  const { check, plan } = readmeExamples();
  runsAsWritten(check, { folder: path.join(project, 'check'), cwd: project, env });
  runsAsWritten(plan, { folder: path.join(project, 'plan'), cwd: project, env });
});
