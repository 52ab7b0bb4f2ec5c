// A definition written in TypeScript with Zod, its schemas from z.toJSONSchema(), is a
// plain object little takes as it is: it has the snapshot of the bundled definition.json
// it mirrors. Code in it (a tool's `execute`, a Zod schema object) is refused by path:
// no live validator code is ever locked.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';

import { LittleError, hash, lock, snapshot } from '@little-stack/compiler';
import { read, sortedJson } from './helpers.mjs';

const Ticket = z.object({ ticketId: z.string(), transcript: z.string() });
const Summary = z.object({ summary: z.string(), severity: z.enum(['low', 'medium', 'high']) });

/**
 * The JSON Schema of a Zod schema as the bundled definition writes it: the shape of the
 * value a run hands in (`io: "input"`: an object that z.object() would strip extra keys
 * from, so no `additionalProperties: false`), without the `$schema` dialect line.
 */
function jsonSchema(schema) {
  const { $schema, ...rest } = z.toJSONSchema(schema, { io: 'input' });
  assert.equal($schema, 'https://json-schema.org/draft/2020-12/schema');
  return rest;
}

const definition = {
  format: 'workflow-definition/v1',
  id: 'support.summarize-ticket',
  description: 'Summarize a support ticket and classify its severity.',
  inputSchema: jsonSchema(Ticket),
  outputSchema: jsonSchema(Summary),
  models: [
    { providerId: 'openai', modelId: 'gpt-5', description: 'Strong reasoning model for complex analysis.' },
    { providerId: 'openai', modelId: 'gpt-4o-mini', description: 'Fast model for short structured outputs.' },
  ],
  tools: [],
  globalTools: [],
  planner: {
    model: { providerId: 'openai', modelId: 'gpt-5' },
    system: 'You design support-ticket workflows. Test code in scratch before committing.',
  },
  memory: { workflow: 'rw', org: 'ro', attached: [] },
  maxOuterCycles: 1,
};

const BUNDLED = 'examples/support-summarize-ticket/definition.json';

test('a Zod-built definition has the snapshot of the bundled definition.json', () => {
  const ours = snapshot(definition);
  const bundled = snapshot(read(BUNDLED));
  assert.equal(ours.inputSchemaHash, bundled.inputSchemaHash);
  assert.equal(ours.outputSchemaHash, bundled.outputSchemaHash);
  assert.equal(hash(ours), hash(bundled));
  assert.equal(sortedJson(ours), sortedJson(bundled));
  // And locks the bundled LWIR to the same WorkflowVersion and lock.
  const lwir = read('examples/support-summarize-ticket/lwir.json');
  assert.equal(sortedJson(lock(lwir, definition)), sortedJson(lock(lwir, read(BUNDLED))));
});

test('a tool with its code in the definition is refused, naming the path', () => {
  const tool = {
    id: 'lookup',
    description: 'Look a ticket up.',
    inputSchema: jsonSchema(z.object({ ticketId: z.string() })),
    outputSchema: jsonSchema(Ticket),
    execute: async ({ ticketId }) => ({ ticketId, transcript: '' }),
  };
  assert.throws(() => snapshot({ ...definition, tools: [tool] }), (error) => {
    assert.ok(error instanceof LittleError);
    assert.equal(error.code, 'input.invalid');
    assert.equal(error.path, 'definition.tools[0].execute');
    assert.match(error.message, /definition\.tools\[0\]\.execute is a function/);
    return true;
  });
  // Without the code, the same tool is a definition little takes.
  const { execute, ...descriptor } = tool;
  assert.equal(typeof execute, 'function');
  assert.equal(snapshot({ ...definition, tools: [descriptor], globalTools: ['lookup'] }).globalTools[0], 'lookup');
});

test('a Zod schema object in place of its JSON Schema is refused, with the way out', () => {
  assert.throws(() => snapshot({ ...definition, inputSchema: Ticket }), (error) => {
    assert.equal(error.code, 'input.invalid');
    assert.equal(error.path, 'definition.inputSchema');
    assert.match(error.message, /z\.toJSONSchema/);
    return true;
  });
});
