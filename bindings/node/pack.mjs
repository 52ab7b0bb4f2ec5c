// Packs the npm package as napi-rs publishes it: the main package @little-stack/compiler
// (JavaScript and declarations, no addon) whose optionalDependencies name one package per
// platform (npm/<platform>/, made by `napi create-npm-dirs` from package.json's
// napi.targets), each holding that platform's addon. What `napi pre-publish` would write into
// package.json is written into a staged copy, so the checkout never depends on a package
// the registry does not have yet.
//
//   node pack.mjs [OUT]     # tarballs into OUT (default ../../target/npm-pack); prints them as JSON

import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(process.argv[2] ?? path.join(here, '..', '..', 'target', 'npm-pack'));

function fail(message) {
  console.error(`pack: ${message}`);
  process.exit(1);
}

function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

function writeJson(file, value) {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** Runs `npm pack` in a staged folder; the tarball's path. */
function npmPack(folder) {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: folder, encoding: 'utf8' }),
  );
  return path.join(out, packed.filename);
}

const main = readJson(path.join(here, 'package.json'));
const stage = path.join(out, 'stage');
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
// Tarballs of an earlier version would be installed too by `npm install OUT/*.tgz`.
for (const old of readdirSync(out).filter((f) => /^little-stack-compiler-.*\.tgz$/.test(f))) rmSync(path.join(out, old));

// The platform packages: each one's package.json names its addon as `main`.
const platforms = readdirSync(path.join(here, 'npm')).sort();
if (platforms.length === 0) fail('no platform package in npm/ (run `npx napi create-npm-dirs`)');
const tarballs = [];
const optionalDependencies = {};
for (const platform of platforms) {
  const manifest = readJson(path.join(here, 'npm', platform, 'package.json'));
  if (manifest.version !== main.version) {
    fail(`npm/${platform} is version ${manifest.version}, the main package ${main.version} (run \`npx napi version\`)`);
  }
  const addon = path.join(here, manifest.main);
  if (!existsSync(addon)) fail(`${manifest.main} is not built (run \`npm run build\`)`);
  const folder = path.join(stage, platform);
  mkdirSync(folder);
  for (const file of ['package.json', 'README.md']) copyFileSync(path.join(here, 'npm', platform, file), path.join(folder, file));
  copyFileSync(addon, path.join(folder, manifest.main));
  optionalDependencies[manifest.name] = manifest.version;
  tarballs.push({ name: manifest.name, tarball: npmPack(folder), addon: manifest.main, addonBytes: statSync(addon).size });
}

// The main package: its files without the addon, and an optional dependency per platform.
const folder = path.join(stage, 'main');
mkdirSync(folder);
const files = main.files.filter((pattern) => !pattern.endsWith('.node'));
for (const file of files) copyFileSync(path.join(here, file), path.join(folder, file));
writeJson(path.join(folder, 'package.json'), { ...main, files, optionalDependencies });
tarballs.unshift({ name: main.name, tarball: npmPack(folder) });

console.log(JSON.stringify(tarballs, null, 2));
