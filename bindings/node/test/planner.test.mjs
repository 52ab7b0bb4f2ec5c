// The planner pipeline in process, against the scripted OpenAI-compatible provider on
// 127.0.0.1 (a real socket, the protocol spoken as a provider speaks it): `plan` gives the
// WorkflowVersion and the log `little plan` gives; `onEvent` hears every event in order;
// an AbortSignal ends the call mid-model-call and `little plan` resumes the run; a
// provider given as a value needs no little.toml and no variable, and its key is in no
// event; a host model function is called once a turn and never on replay; `verify` in
// process says what `little verify` says.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { LittleError, events, plan, planEvents, verify } from '../index.mjs';
import { PACKAGE, REPO, littleBin } from './helpers.mjs';

const EXAMPLE = path.join(REPO, 'examples', 'support-summarize-ticket');
const KEY = 'sk-node-given-KEY-8842';
const lwir = JSON.parse(readFileSync(path.join(EXAMPLE, 'lwir.json'), 'utf8'));

/** Three turns: look around (with some text), validate, submit. */
const TURNS = [
  { text: 'Looking around first.', toolCalls: [{ id: 'c1', name: 'bash', arguments: { command: 'echo hello > note.txt && ls' } }] },
  { toolCalls: [{ id: 'c2', name: 'validate_lwir', arguments: { lwir } }] },
  { toolCalls: [{ id: 'c3', name: 'submit_lwir', arguments: { lwir } }] },
];

function scriptedProviderBin() {
  const bin =
    process.env.LITTLE_SCRIPTED_PROVIDER || path.join(process.env.CARGO_TARGET_DIR || path.join(REPO, 'target'), 'debug', 'examples', 'scripted-provider');
  assert.ok(existsSync(bin), `the scripted provider ${bin} is built (test.sh builds it)`);
  return bin;
}

/** A folder of its own for each test. */
function scratch(name) {
  const dir = path.join(PACKAGE, 'test', '.out', 'planner', name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Starts the scripted provider on `script`; resolves to its base URL and what it read. */
async function provider(dir, script) {
  const scriptFile = path.join(dir, `script-${process.hrtime.bigint()}.json`);
  const requestsFile = `${scriptFile}.requests.jsonl`;
  writeFileSync(scriptFile, JSON.stringify(script));
  const child = spawn(scriptedProviderBin(), [scriptFile, requestsFile], { stdio: ['pipe', 'pipe', 'inherit'] });
  const baseUrl = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the scripted provider exited (${code})`)));
  });
  const requests = () =>
    existsSync(requestsFile)
      ? readFileSync(requestsFile, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
      : [];
  return { baseUrl, requests, stop: () => child.stdin.end() };
}

function common(dir, runId) {
  return {
    definition: path.join(EXAMPLE, 'definition.json'),
    input: path.join(EXAMPLE, 'input.json'),
    runId,
    events: path.join(dir, 'events.jsonl'),
    sandbox: 'none',
    memoryRoot: path.join(dir, 'memory'),
    lockWait: 0,
  };
}

function script(extra = {}) {
  return { turns: TURNS, ...extra };
}

/** An event as compared across runs: its times left out (`durationMs`, `at`). */
function timeless(event) {
  return JSON.parse(JSON.stringify(event, (key, value) => (key === 'durationMs' || key === 'at' ? undefined : value)));
}

function cliPlan(dir, runId, baseUrl, extra = []) {
  writeFileSync(path.join(dir, 'little.toml'), `[providers.openai]\nbase_url = "${baseUrl}"\n`);
  return spawnSync(
    littleBin(),
    [
      'plan', path.join(EXAMPLE, 'definition.json'), '--input', path.join(EXAMPLE, 'input.json'),
      '--run-id', runId, '--events', path.join(dir, 'events.jsonl'), '--config', path.join(dir, 'little.toml'),
      '--sandbox', 'none', '--memory-root', path.join(dir, 'memory'), '--lock-wait', '0', '-o', path.join(dir, 'lock.json'),
      ...extra,
    ],
    { cwd: dir, encoding: 'utf8' },
  );
}

test('plan in process gives the WorkflowVersion and the log of `little plan`, and hears every event in order', async () => {
  // Both runs in the same folder, one after the other: the prompt names the session's paths.
  const dir = scratch('same');
  const served = await provider(path.dirname(dir), script());
  const heard = [];
  let result;
  let mine;
  try {
    result = await plan({
      ...common(dir, 'run_same'),
      providers: { openai: { baseUrl: served.baseUrl, apiKey: KEY } },
      onEvent: (event) => heard.push(event),
    });
    for (const request of served.requests()) assert.equal(request.authorization, `Bearer ${KEY}`);
  } finally {
    served.stop();
  }
  assert.equal(result.session.modelCalls, 3);
  mine = await events(path.join(dir, 'events.jsonl'), { runId: 'run_same' });
  assert.deepEqual(heard.filter((e) => e.seq !== undefined), mine, 'onEvent heard every stored event, in order');
  assert.ok(!readFileSync(path.join(dir, 'events.jsonl'), 'utf8').includes(KEY), 'the key is in no event');
  assert.ok(mine.every((e) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(e.payload.at)), 'every event has its time');

  scratch('same');
  const cli = await provider(path.dirname(dir), script());
  let run;
  try {
    run = cliPlan(dir, 'run_same', cli.baseUrl);
  } finally {
    cli.stop();
  }
  assert.equal(run.status, 0, run.stderr + run.stdout);
  const written = JSON.parse(readFileSync(path.join(dir, 'lock.json'), 'utf8'));
  assert.deepEqual(result.registration, written, 'the same WorkflowVersion and lock');
  assert.match(run.stdout, new RegExp(result.lwirVersionId));
  const theirs = await events(path.join(dir, 'events.jsonl'), { runId: 'run_same' });
  assert.deepEqual(mine.map(timeless), theirs.map(timeless), 'the same log apart from times');
});

test('a provider given as a value needs no little.toml and no variable; the streamed text is heard, not stored', async () => {
  const dir = scratch('value');
  assert.ok(!existsSync(path.join(dir, 'little.toml')));
  const served = await provider(dir, { turns: [{ text: 'Thinking out loud.', toolCalls: TURNS[2].toolCalls }] });
  try {
    const seen = [];
    const iterator = planEvents({ ...common(dir, 'run_value'), providers: { openai: { baseUrl: served.baseUrl, apiKey: KEY, stream: true } } });
    let step;
    while (!(step = await iterator.next()).done) seen.push(step.value);
    const result = step.value;
    assert.equal(result.session.modelCalls, 1);
    const text = seen.filter((e) => e.type === 'harness.model.text').map((e) => e.payload.text).join('');
    assert.equal(text, 'Thinking out loud.');
    assert.ok(seen.every((e) => e.type === 'harness.model.text' || Number.isInteger(e.seq)));
    const stored = await events(path.join(dir, 'events.jsonl'), { runId: 'run_value' });
    assert.ok(!stored.some((e) => e.type === 'harness.model.text'), 'the text is shown, not stored');
    assert.ok(!JSON.stringify(stored).includes(KEY));
  } finally {
    served.stop();
  }
});

test('an AbortSignal ends the call mid-model-call, and `little plan` resumes the run', async () => {
  const dir = scratch('abort');
  const served = await provider(dir, script({ stallOnce: 2 }));
  try {
    const controller = new AbortController();
    const running = plan({
      ...common(dir, 'run_abort'),
      providers: { openai: { baseUrl: served.baseUrl } },
      signal: controller.signal,
    });
    for (let waited = 0; served.requests().filter((r) => r.turn === 2).length === 0; waited += 20) {
      assert.ok(waited < 30000, 'turn 2 was asked');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    controller.abort();
    await assert.rejects(running, (error) => error instanceof LittleError && error.code === 'cancelled');
    const log = await events(path.join(dir, 'events.jsonl'), { runId: 'run_abort' });
    assert.equal(log.at(-1).type, 'harness.model.called', 'turn 2 left in flight');
    const run = cliPlan(dir, 'run_abort', served.baseUrl);
    assert.equal(run.status, 0, run.stderr + run.stdout);
    assert.match(run.stdout, /registered wfver_/);
    assert.match(run.stdout, /1 model call replayed|model calls? .*replayed/);
  } finally {
    served.stop();
  }
});

test('a host model function is called once a turn, and not at all on replay', async () => {
  const dir = scratch('host');
  const answers = [
    { content: 'Checking.', tool_calls: [{ id: 'h1', type: 'function', function: { name: 'bash', arguments: { command: 'true' } } }] },
    { tool_calls: [{ id: 'h2', type: 'function', function: { name: 'validate_lwir', arguments: JSON.stringify({ lwir }) } }] },
    { tool_calls: [{ id: 'h3', type: 'function', function: { name: 'submit_lwir', arguments: { lwir } } }] },
  ];
  const asked = [];
  const model = async (request, { providerId }) => {
    asked.push({ providerId, messages: request.messages.length, tools: request.tools.map((t) => t.function.name) });
    await new Promise((resolve) => setTimeout(resolve, 5));
    return answers[request.messages.filter((m) => m.role === 'assistant').length];
  };
  const first = await plan({ ...common(dir, 'run_host'), model });
  assert.equal(asked.length, 3, 'once a turn');
  assert.deepEqual(asked[0], { providerId: 'openai', messages: 2, tools: ['bash', 'validate_lwir', 'submit_lwir'] });
  const again = await plan({ ...common(dir, 'run_host'), model });
  assert.equal(asked.length, 3, 'replay never calls it');
  assert.deepEqual(again.registration, first.registration);
  assert.equal(again.session.modelCallsReplayed, 3);

  const failing = scratch('host-fails');
  await assert.rejects(
    plan({ ...common(failing, 'run_host_fails'), model: () => { throw new Error('the gateway is down'); } }),
    (error) => error instanceof LittleError && /the gateway is down/.test(error.message),
  );
});

test('verify in process says what `little verify` says', async () => {
  const dir = scratch('verify');
  const registration = JSON.parse(
    spawnSync(littleBin(), ['lock', path.join(EXAMPLE, 'lwir.json'), '--definition', path.join(EXAMPLE, 'definition.json')], { encoding: 'utf8' }).stdout,
  );
  writeFileSync(path.join(dir, 'lock.json'), JSON.stringify(registration));
  const args = [path.join(EXAMPLE, 'lwir.json'), '--lock', path.join(dir, 'lock.json'), '--definition', path.join(EXAMPLE, 'definition.json')];
  const cli = spawnSync(littleBin(), ['verify', ...args], { encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  const verified = verify({ lwir: args[0], lock: args[2], definition: args[4] });
  assert.ok(cli.stdout.includes(`verified ${verified.lwirVersionId} (${verified.workflowVersionHash})`), cli.stdout);
  assert.equal(verified.capabilitiesChecked, true);

  const changed = structuredClone(lwir);
  changed.steps[0].id = 'renamed';
  writeFileSync(path.join(dir, 'changed.json'), JSON.stringify(changed));
  const refused = spawnSync(littleBin(), ['verify', path.join(dir, 'changed.json'), '--lock', path.join(dir, 'lock.json')], { encoding: 'utf8' });
  assert.equal(refused.status, 1);
  assert.throws(
    () => verify({ lwir: path.join(dir, 'changed.json'), lock: path.join(dir, 'lock.json') }),
    (error) => error instanceof LittleError && error.code === 'verify.failed' && refused.stdout.includes(error.message),
  );
});
