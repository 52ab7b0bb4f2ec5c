// `little mcp` through the official TypeScript SDK (@modelcontextprotocol/sdk), over stdio:
// the SDK's client starts the server, lists its tools, validates each structured result
// against the tool's output schema (as the SDK does), and the results are compared with
// what the command line prints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const LITTLE = process.env.LITTLE_BIN;
assert.ok(LITTLE, 'LITTLE_BIN names the little binary');

async function connect({ roots = [ROOT], cwd = ROOT } = {}) {
  const client = new Client({ name: 'little-tests', version: '0.0.0' }, { capabilities: roots.length ? { roots: {} } : {} });
  if (roots.length) {
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: roots.map((dir) => ({ uri: pathToFileURL(dir).href })) }));
  }
  await client.connect(new StdioClientTransport({ command: LITTLE, args: ['mcp'], cwd, stderr: 'inherit' }));
  // The SDK validates a structured result against the output schema of a listed tool.
  await client.listTools();
  return client;
}

function cli(...args) {
  try {
    return execFileSync(LITTLE, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  } catch (e) {
    if (e.status === 1) return e.stdout;
    throw e;
  }
}

const errorOf = (result) => {
  assert.equal(result.isError, true, JSON.stringify(result.content));
  return JSON.parse(result.content[1].text).error;
};

test('the tools are listed with input and output schemas', async () => {
  const client = await connect();
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['check', 'codes', 'compile', 'explain', 'families', 'graph', 'hash', 'lock', 'schema', 'snapshot']);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema.type, 'object', tool.name);
    }
  } finally {
    await client.close();
  }
});

test('every bundled example gets the report the CLI prints', async () => {
  const client = await connect();
  try {
    const files = JSON.parse(cli('check', '--format', 'json', 'examples')).files.map((f) => f.path);
    assert.ok(files.length >= 8);
    for (const path of files) {
      const result = await client.callTool({ name: 'check', arguments: { path } });
      assert.equal(result.isError, false, path);
      assert.deepEqual(result.structuredContent, JSON.parse(cli('check', '--format', 'json', path)), path);
    }
  } finally {
    await client.close();
  }
});

test('a broken draft gets the cycle witness and the did-you-mean', async () => {
  const draft = JSON.parse(readFileSync(join(ROOT, 'examples/cycle.json'), 'utf8'));
  // A node outside the cycle, its family misspelt.
  const right = 'notify.chat';
  draft.nodes.push({ id: 'extra', family: 'notify.chta', config: {} });
  const client = await connect();
  try {
    const result = await client.callTool({ name: 'check', arguments: { text: JSON.stringify(draft, null, 2) } });
    const { diagnostics } = result.structuredContent.files[0];
    const witness = diagnostics.find((d) => d.witness)?.witness;
    assert.ok(witness?.nodes.length && witness.edges.length, JSON.stringify(diagnostics));
    assert.ok(diagnostics.some((d) => (d.help ?? '').includes(right)), JSON.stringify(diagnostics));
  } finally {
    await client.close();
  }
});

test('a resource reads as the CLI prints it', async () => {
  const client = await connect();
  try {
    const page = await client.readResource({ uri: 'little://explain/graph.cycle' });
    assert.equal(page.contents[0].text, cli('explain', 'graph.cycle'));
    const schema = await client.readResource({ uri: 'little://schemas/report' });
    assert.deepEqual(JSON.parse(schema.contents[0].text), JSON.parse(cli('schema', 'report')));
  } finally {
    await client.close();
  }
});

test('a path outside the roots, or a symlink out, is refused', async () => {
  const root = mkdtempSync(join(tmpdir(), 'little-mcp-'));
  writeFileSync(join(root, 'draft.json'), readFileSync(join(ROOT, 'examples/quarterly-report.json')));
  symlinkSync(join(ROOT, 'examples/cycle.json'), join(root, 'out.json'));
  const client = await connect({ roots: [root] });
  try {
    const ok = await client.callTool({ name: 'check', arguments: { path: 'draft.json' } });
    assert.equal(ok.isError, false);
    for (const path of [join(ROOT, 'examples/cycle.json'), 'out.json', '../' + 'x.json']) {
      const refused = await client.callTool({ name: 'check', arguments: { path } });
      const error = errorOf(refused);
      assert.ok(['path.outside_roots', 'path.unreadable'].includes(error.code), path);
    }
    const linked = errorOf(await client.callTool({ name: 'check', arguments: { path: 'out.json' } }));
    assert.equal(linked.code, 'path.outside_roots');
    assert.match(linked.message, /outside the client's roots/);
  } finally {
    await client.close();
    rmSync(root, { recursive: true });
  }
});

test('it survives a 50 MB string and a 200,000-deep document', async () => {
  const client = await connect();
  try {
    const huge = await client.callTool({ name: 'check', arguments: { text: '"' + 'x'.repeat(50 << 20) + '"' } }, undefined, { timeout: 120_000 });
    assert.equal(huge.structuredContent.summary.files, 1);
    const deep = await client.callTool({ name: 'check', arguments: { text: '['.repeat(200_000) + ']'.repeat(200_000) } }, undefined, { timeout: 120_000 });
    assert.equal(deep.structuredContent.summary.files, 1);
    const codes = await client.callTool({ name: 'codes', arguments: {} });
    assert.ok(codes.structuredContent.codes.length > 50);
  } finally {
    await client.close();
  }
});

test('a line that is not JSON, written into a session, is answered as a parse error and the session goes on', async () => {
  const client = new Client({ name: 'little-tests', version: '0.0.0' });
  const transport = new StdioClientTransport({ command: LITTLE, args: ['mcp'], cwd: ROOT, stderr: 'inherit' });
  await client.connect(transport);
  try {
    const heard = new Promise((resolve, reject) => {
      client.onerror = (error) => resolve(String(error?.message ?? error));
      setTimeout(() => reject(new Error('no answer to the line in 10 s')), 10_000).unref();
    });
    // Bytes no SDK sends, on the pipe the SDK's transport writes to (its child process).
    transport._process.stdin.write('this is not json\n');
    // The SDK hears the server's answer, a JSON-RPC error with `"id": null` (JSON-RPC 2.0;
    // the Python SDK requires the null), which this SDK's schema does not take (it wants
    // the id left out): it reports the message as one it cannot read, and goes on.
    assert.match(await heard, /"id"/);
    const checked = await client.callTool({ name: 'check', arguments: { path: 'examples/quarterly-report.json' } });
    assert.deepEqual(checked.structuredContent, JSON.parse(cli('check', '--format', 'json', 'examples/quarterly-report.json')));
  } finally {
    await client.close();
  }
});
