'use strict';
// @little-stack/compiler: little in process, for node. This file checks what JavaScript
// hands in (text, bytes or plain JSON values, never code) and turns what the native addon
// (src/lib.rs, over the Rust crate little-embed) gives back into values and LittleErrors.

const path = require('node:path');
const fs = require('node:fs');

/** Why a call could not give its result: `code` is stable, for programs. */
class LittleError extends Error {
  constructor(code, message, path, report, cause) {
    super(message);
    this.name = 'LittleError';
    this.code = code;
    this.path = path ?? null;
    if (report !== undefined) this.report = report;
    // With `run.failed`: the cause code of the run's RunFailed event.
    if (cause !== undefined && cause !== null) this.causeCode = cause;
  }
}

// Where the addon comes from, as napi-rs lays a package out: built next to this file by
// `napi build --platform` when developing (`little.linux-x64-gnu.node`), else from the
// platform's own package (`@little-stack/compiler-linux-x64-gnu`), which npm installs as
// an optional dependency on that platform only. LITTLE_NODE_ADDON names another file.
function platformNames() {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
    const glibc = report?.header?.glibcVersionRuntime;
    const abi = arch === 'arm' ? 'gnueabihf' : 'gnu';
    return glibc ? [`linux-${arch}-${abi}`, `linux-${arch}-musl`] : [`linux-${arch}-musl`, `linux-${arch}-${abi}`];
  }
  if (platform === 'win32') return [`win32-${arch}-msvc`, `win32-${arch}-gnu`];
  if (platform === 'darwin') return [`darwin-${arch}`, 'darwin-universal'];
  return [`${platform}-${arch}`];
}

/** The platform package's addon (its `main`), or null when that package is not installed. */
function platformPackage(name) {
  try {
    return require.resolve(`@little-stack/compiler-${name}`);
  } catch (error) {
    if (error?.code === 'MODULE_NOT_FOUND') return null;
    throw error;
  }
}

function loadNative() {
  if (process.env.LITTLE_NODE_ADDON) return require(path.resolve(process.env.LITTLE_NODE_ADDON));
  const names = platformNames();
  const local = names.map((name) => path.join(__dirname, `little.${name}.node`)).find((file) => fs.existsSync(file));
  const found = local ?? names.map(platformPackage).find((file) => file !== null);
  if (!found) {
    throw new Error(
      `@little-stack/compiler: no native addon for ${process.platform}-${process.arch}: looked for ` +
        `${names.map((name) => `little.${name}.node`).join(', ')} next to ${__dirname} and for the packages ` +
        `${names.map((name) => `@little-stack/compiler-${name}`).join(', ')}; published builds exist for ` +
        `linux-x64-gnu only: elsewhere, build it with \`npm run build\` in bindings/node`,
    );
  }
  return require(found);
}

const native = loadNative();

// ---------------------------------------------------------------------------------------
// What goes in: text, bytes, or a JSON value that is plain data all the way down.

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function member(path, key) {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function invalid(message, path) {
  return new LittleError('input.invalid', message, path);
}

/** `an Object`, `a Map`: a name with its indefinite article. */
function withArticle(name) {
  return `${/^[aeiou]/i.test(name) ? 'an' : 'a'} ${name}`;
}

function kindOf(value) {
  const proto = Object.getPrototypeOf(value);
  const name = proto?.constructor?.name;
  return name ? withArticle(name) : 'an object of another kind';
}

/**
 * Refuses any value that is not plain JSON data, naming where it is: a function (a
 * definition holds JSON Schemas, never code: no live validator is ever locked), a symbol,
 * a bigint, undefined in an array or a hole, a number JSON has not (NaN, Infinity), an
 * object that is not a plain object or array (a Map, a Date, a Zod schema…), and a cycle.
 * An object member whose value is undefined is left out, as JSON.stringify leaves it out.
 * It walks with its own stack, so depth is no limit.
 */
function refuseNonJson(root, rootPath) {
  const stack = [[root, rootPath, false]];
  const open = new Map(); // the objects being walked, to the path they were met at
  while (stack.length > 0) {
    const [value, at, leaving] = stack.pop();
    if (leaving) {
      open.delete(value);
      continue;
    }
    switch (typeof value) {
      case 'string':
      case 'boolean':
        continue;
      case 'number':
        if (!Number.isFinite(value)) throw invalid(`${at} is ${value}, which JSON has no number for`, at);
        continue;
      case 'function':
        throw invalid(
          `${at} is a function: little takes JSON, never code (a definition's schemas are JSON Schemas, ` +
            'e.g. from z.toJSONSchema(); no live validator code is ever locked)',
          at,
        );
      case 'symbol':
        throw invalid(`${at} is a symbol, which is not JSON`, at);
      case 'bigint':
        throw invalid(`${at} is a bigint, which is not JSON: give a number or a string`, at);
      case 'undefined':
        throw invalid(`${at} is undefined, which is not JSON`, at);
      default:
        break;
    }
    if (value === null) continue;
    if (open.has(value)) throw invalid(`${at} is a cycle: it refers back to ${open.get(value)}`, at);
    if (Array.isArray(value)) {
      open.set(value, at);
      stack.push([value, at, true]);
      for (let i = value.length - 1; i >= 0; i--) {
        if (!(i in value)) throw invalid(`${at}[${i}] is a hole (undefined), which is not JSON`, `${at}[${i}]`);
        stack.push([value[i], `${at}[${i}]`, false]);
      }
      continue;
    }
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const hint =
        typeof value.toJSONSchema === 'function' || value?._zod
          ? ': pass its JSON Schema (z.toJSONSchema(schema)), not the schema object'
          : '';
      throw invalid(`${at} is ${kindOf(value)}, not a plain object or array${hint}`, at);
    }
    open.set(value, at);
    stack.push([value, at, true]);
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const child = value[keys[i]];
      if (child !== undefined) stack.push([child, member(at, keys[i]), false]);
    }
  }
}

function isBytes(value) {
  return ArrayBuffer.isView(value) || value instanceof ArrayBuffer;
}

function toBuffer(value) {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

/** A document as text or bytes: JSON text as it is; a JSON value serialized. */
function documentInput(value, name, { objects = true } = {}) {
  if (typeof value === 'string') return value;
  if (isBytes(value)) return toBuffer(value);
  if (!objects) throw invalid(`${name} must be a string or bytes (a Buffer or a Uint8Array), not ${describe(value)}`, name);
  if (value === undefined) throw invalid(`${name} is missing`, name);
  refuseNonJson(value, name);
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw invalid(`${name} cannot be written as JSON: ${error.message}`, name);
  }
}

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return kindOf(value);
  return withArticle(typeof value);
}

function text(value, name) {
  if (typeof value !== 'string') throw invalid(`${name} must be a string, not ${describe(value)}`, name);
  return value;
}

const DOCUMENTS = ['catalog', 'context', 'bindings', 'snapshot'];

function nearest(name, names) {
  const distance = (a, b) => {
    const row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      let diagonal = row[0];
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const above = row[j];
        row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
        diagonal = above;
      }
    }
    return row[b.length];
  };
  const best = names.map((n) => [distance(name, n), n]).sort((x, y) => x[0] - y[0])[0];
  return best && best[0] <= Math.max(2, name.length / 3) ? best[1] : null;
}

/** The options object of a call: only the names it takes; the documents as text or bytes. */
function optionsOf(options, names) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw invalid(`options must be an object, not ${describe(options)}`, 'options');
  }
  for (const key of Object.keys(options)) {
    if (!names.includes(key)) {
      const guess = nearest(key, names);
      const help = guess ? `; did you mean \`${guess}\`?` : `; the options are ${names.join(', ')}`;
      throw invalid(`unknown option \`${key}\`${help}`, member('options', key));
    }
  }
  return options;
}

function documentsOf(options) {
  const docs = {};
  for (const name of DOCUMENTS) {
    if (options[name] !== undefined && options[name] !== null) docs[name] = documentInput(options[name], name);
  }
  return docs;
}

function checkArguments(draft, options) {
  const given = optionsOf(options, ['path', ...DOCUMENTS]);
  const input = documentInput(draft, 'text', { objects: false });
  const file = given.path === undefined || given.path === null ? '<input>' : text(given.path, 'path');
  return [input, file, documentsOf(given)];
}

// ---------------------------------------------------------------------------------------
// What comes out: JSON text parsed, or a Failure thrown as a LittleError.

function fromFailure(failure) {
  const report = failure.report === undefined || failure.report === null ? undefined : JSON.parse(failure.report);
  return new LittleError(failure.code, failure.message, failure.path, report, failure.cause);
}

function unwrap(outcome) {
  if (typeof outcome === 'string') return JSON.parse(outcome);
  throw fromFailure(outcome);
}

/** Calls the addon; anything it throws that is not a LittleError is a bug in little. */
function call(run) {
  try {
    return unwrap(run());
  } catch (error) {
    throw asLittle(error);
  }
}

function asLittle(error) {
  if (error instanceof LittleError) return error;
  return new LittleError('internal', `little's node binding failed: ${error?.message ?? error}; this is a bug in little`);
}

function callAsync(run) {
  let promise;
  try {
    promise = run();
  } catch (error) {
    return Promise.reject(asLittle(error));
  }
  return promise.then(unwrap, (error) => Promise.reject(asLittle(error)));
}

// ---------------------------------------------------------------------------------------
// The API.

function check(draft, options) {
  return call(() => native.check(...checkArguments(draft, options)));
}

function checkAsync(draft, options) {
  let args;
  try {
    args = checkArguments(draft, options);
  } catch (error) {
    return Promise.reject(error);
  }
  return callAsync(() => native.checkAsync(...args));
}

function compile(draft, options) {
  return call(() => native.compile(...checkArguments(draft, options)));
}

function compileAsync(draft, options) {
  let args;
  try {
    args = checkArguments(draft, options);
  } catch (error) {
    return Promise.reject(error);
  }
  return callAsync(() => native.compileAsync(...args));
}

function explain(code) {
  return call(() => native.explain(text(code, 'code')));
}

function codes() {
  return call(() => native.codes());
}

function hash(document) {
  return call(() => native.hash(documentInput(document, 'document')));
}

function schema(name) {
  return call(() => native.schema(text(name, 'name')));
}

function schemaNames() {
  return native.schemaNames();
}

function snapshot(definition) {
  return call(() => native.snapshot(documentInput(definition, 'definition')));
}

function lock(lwir, definition) {
  return call(() => native.lock(documentInput(lwir, 'lwir'), documentInput(definition, 'definition')));
}

function position(value, at) {
  if (value === null || typeof value !== 'object') throw new LittleError('edit.invalid', `${at} must be { line, character }`, at);
  for (const key of ['line', 'character']) {
    const n = value[key];
    if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) {
      throw new LittleError('edit.invalid', `${at}.${key} must be a whole number from 0, not ${describe(n)}`, `${at}.${key}`);
    }
  }
  return value;
}

/** A change as the addon takes it: the whole text, or edits flattened. */
function changeOf(change) {
  if (typeof change === 'string') return change;
  if (!Array.isArray(change)) {
    throw new LittleError('edit.invalid', `the change must be the new text or an array of edits, not ${describe(change)}`, 'edits');
  }
  return change.map((edit, i) => {
    const at = `edits[${i}]`;
    if (edit === null || typeof edit !== 'object') throw new LittleError('edit.invalid', `${at} must be { range, text }`, at);
    if (edit.range === null || typeof edit.range !== 'object') {
      throw new LittleError('edit.invalid', `${at}.range must be { start, end }`, `${at}.range`);
    }
    const start = position(edit.range.start, `${at}.range.start`);
    const end = position(edit.range.end, `${at}.range.end`);
    if (typeof edit.text !== 'string') throw new LittleError('edit.invalid', `${at}.text must be a string`, `${at}.text`);
    return {
      startLine: start.line,
      startCharacter: start.character,
      endLine: end.line,
      endCharacter: end.character,
      text: edit.text,
    };
  });
}

/**
 * Documents held open against one set of workspace documents, edited as an editor edits
 * them: each edit re-checks only what it touches. Calls, the asynchronous ones included,
 * take effect in the order they are made.
 */
class Workspace {
  #native;

  constructor(options) {
    const made = (() => {
      try {
        return native.newWorkspace(documentsOf(optionsOf(options, DOCUMENTS)));
      } catch (error) {
        throw asLittle(error);
      }
    })();
    if (!(made instanceof native.NativeWorkspace)) throw fromFailure(made);
    this.#native = made;
  }

  open(path, contents) {
    return call(() => this.#native.open(text(path, 'path'), text(contents, 'text')));
  }

  openAsync(path, contents) {
    try {
      const args = [text(path, 'path'), text(contents, 'text')];
      return callAsync(() => this.#native.openAsync(...args));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  update(path, change) {
    return call(() => this.#native.update(text(path, 'path'), changeOf(change)));
  }

  updateAsync(path, change) {
    try {
      const args = [text(path, 'path'), changeOf(change)];
      return callAsync(() => this.#native.updateAsync(...args));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  close(path) {
    call(() => this.#native.close(text(path, 'path')));
  }

  report(path) {
    return call(() => this.#native.report(text(path, 'path')));
  }

  reportAsync(path) {
    try {
      const args = [text(path, 'path')];
      return callAsync(() => this.#native.reportAsync(...args));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  text(path) {
    return call(() => this.#native.text(text(path, 'path'))) ?? undefined;
  }

  paths() {
    return call(() => this.#native.paths());
  }
}

// ---------------------------------------------------------------------------------------
// The planner pipeline: plan, fix, verify, events. A session runs on a thread of its own
// in the addon; every event reaches `onEvent` (or the async iterator) in order, on the
// event loop; an AbortSignal ends the call, leaving the log resumable.

const HOOKS = ['onEvent', 'signal', 'model'];

/** The options as the addon takes them (JSON, the hooks taken out), and the hooks. */
function plannerOptions(options, required) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalid(`the options must be an object, not ${describe(options)}`, 'options');
  }
  const data = {};
  for (const [key, value] of Object.entries(options)) {
    if (HOOKS.includes(key) || value === undefined) continue;
    data[key] = value;
  }
  for (const key of required) {
    if (typeof data[key] !== 'string') throw invalid(`options.${key} must be a string (a path, an id or a URL)`, key);
  }
  refuseNonJson(data, 'options');
  const { onEvent, signal, model } = options;
  if (onEvent !== undefined && typeof onEvent !== 'function') throw invalid('options.onEvent must be a function', 'onEvent');
  if (model !== undefined && typeof model !== 'function') throw invalid('options.model must be a function', 'model');
  if (signal !== undefined && (signal === null || typeof signal.aborted !== 'boolean')) {
    throw invalid('options.signal must be an AbortSignal', 'signal');
  }
  return [JSON.stringify(data), { onEvent, signal, model }];
}

function session(start, options, required) {
  let json;
  let hooks;
  try {
    [json, hooks] = plannerOptions(options, required);
  } catch (error) {
    return Promise.reject(error);
  }
  const run = new native.NativeRun();
  const { onEvent, signal, model } = hooks;
  if (signal?.aborted) return Promise.reject(new LittleError('cancelled', 'the call was cancelled before it began', null));
  const abort = () => run.cancel();
  signal?.addEventListener('abort', abort, { once: true });
  const hear = onEvent && ((text) => onEvent(JSON.parse(text)));
  // The host model: each request is handed to `model`, whose answer (or promise of one)
  // goes back to the session waiting for it.
  const ask =
    model &&
    ((text) => {
      const { id, providerId, request } = JSON.parse(text);
      Promise.resolve()
        .then(() => model(request, { providerId }))
        .then(
          (message) => run.answer(id, true, JSON.stringify(message ?? null)),
          (error) => run.answer(id, false, String(error?.message ?? error)),
        );
    });
  return callAsync(() => start(run, json, hear, ask)).finally(() => signal?.removeEventListener('abort', abort));
}

function plan(options) {
  return session((...args) => native.planAsync(...args), options, ['definition', 'input', 'runId', 'events']);
}

function fix(options) {
  return session((...args) => native.fixAsync(...args), options, ['lwir', 'step', 'error', 'definition', 'runId', 'events']);
}

function verify(options) {
  const given = optionsOf(options, ['lwir', 'lock', 'definition']);
  return call(() =>
    native.verify(
      text(given.lwir, 'lwir'),
      text(given.lock, 'lock'),
      given.definition === undefined || given.definition === null ? null : text(given.definition, 'definition'),
    ),
  );
}

function events(store, options) {
  let runId;
  try {
    const given = optionsOf(options, ['runId']);
    runId = given.runId === undefined || given.runId === null ? null : text(given.runId, 'runId');
    text(store, 'store');
  } catch (error) {
    return Promise.reject(error);
  }
  return callAsync(() => native.eventsAsync(store, runId));
}

/**
 * `plan` as an async iterator of its events (the model's streamed text among them), in
 * order; the result is the iterator's return value, and a failure is thrown from it.
 */
async function* planEvents(options) {
  const queue = [];
  let wake = null;
  let settled = null;
  const given = { ...options, onEvent: (event) => { queue.push(event); wake?.(); } };
  plan(given).then(
    (value) => { settled = { value }; wake?.(); },
    (error) => { settled = { error }; wake?.(); },
  );
  for (;;) {
    if (queue.length > 0) {
      yield queue.shift();
      continue;
    }
    if (settled) {
      if (settled.error) throw settled.error;
      return settled.value;
    }
    await new Promise((resolve) => { wake = resolve; });
    wake = null;
  }
}

module.exports = {
  LittleError,
  plan,
  planEvents,
  fix,
  verify,
  events,
  Workspace,
  check,
  checkAsync,
  compile,
  compileAsync,
  explain,
  codes,
  hash,
  schema,
  schemaNames,
  snapshot,
  lock,
};
