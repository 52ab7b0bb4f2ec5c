// Uses the API from an ES module as a TypeScript program would; test/types.test.mjs
// type-checks it (strict, exactOptionalPropertyTypes). The @ts-expect-error lines are
// mistakes the declarations must catch.

import { readFileSync } from 'node:fs';
import { z } from 'zod';

import {
  LittleError,
  Workspace,
  check,
  checkAsync,
  codes,
  compile,
  explain,
  hash,
  lock,
  schema,
  snapshot,
  type Candidate,
  type CodeInfo,
  type Compiled,
  type DefinitionSnapshot,
  type Diagnostic,
  type DraftCandidate,
  type Edit,
  type ErrorCode,
  type Registration,
  type Report,
} from '@little-stack/compiler';

const draft = readFileSync('examples/quarterly-report.json', 'utf8');
const report: Report = check(draft, {
  path: 'quarterly-report.json',
  context: readFileSync('examples/context.json'),
  bindings: JSON.parse(readFileSync('examples/bindings.json', 'utf8')) as unknown as object,
});
const file = report.files[0]!;
const blocking: number = report.summary.blocking;
// @ts-expect-error: the candidate is null while a diagnostic blocks
file.candidate.id;
const candidate: Candidate | null = file.candidate;
if (candidate && 'topologyHash' in candidate) {
  const draftCandidate: DraftCandidate = candidate;
  const status: 'none' | 'unknown' | 'accepted' = draftCandidate.bindingStatus;
  void status;
}
for (const d of file.diagnostics satisfies Diagnostic[]) {
  const where = d.span ? `${d.span.line}:${d.span.column}` : (d.path ?? '');
  // @ts-expect-error: severities are error, warning and info
  if (d.severity === 'fatal') void where;
  // @ts-expect-error: an absent field is absent, never null
  const span: NonNullable<Diagnostic['span']> | null = d.span;
  void span;
}
// @ts-expect-error: a draft is text or bytes, its spans positions in them
check({ format: 'workflow-draft/v1' });
// @ts-expect-error: options are the documents and the path
check(draft, { contxt: '{}' });

try {
  const compiled: Compiled = compile(draft);
  compiled.topology.transitions.map((t) => t.kind satisfies 'forward' | 'branch' | 'retry');
} catch (error) {
  if (error instanceof LittleError) {
    const code: ErrorCode = error.code;
    const path: string | null = error.path;
    if (error.code === 'blocked') console.log(error.report?.summary.blocking, code, path);
  }
}

const page: string = explain('graph.cycle');
const all: CodeInfo[] = codes();
const digest: string = hash({ a: 1 });
const draftSchema = schema('draft');
void [page, all, digest, draftSchema, blocking];

// A definition with its schemas from Zod: JSON Schemas, no code.
const Ticket = z.object({ ticketId: z.string(), transcript: z.string() });
const definition = {
  format: 'workflow-definition/v1',
  id: 'support.summarize-ticket',
  inputSchema: z.toJSONSchema(Ticket, { io: 'input' }),
  outputSchema: z.toJSONSchema(z.object({ summary: z.string() }), { io: 'input' }),
  models: [{ providerId: 'openai', modelId: 'gpt-4o-mini' }],
  planner: { model: { providerId: 'openai', modelId: 'gpt-4o-mini' }, system: '' },
};
const snap: DefinitionSnapshot = snapshot(definition);
const registration: Registration = lock(readFileSync('examples/support-summarize-ticket/lwir.json'), definition);
const versionId: string = registration.lock.workflowVersionId;
void [snap.inputSchemaHash, versionId];

const workspace = new Workspace({ context: readFileSync('examples/context.json', 'utf8') });
workspace.open('draft.json', draft);
const edit: Edit = { range: { start: { line: 3, character: 0 }, end: { line: 3, character: 0 } }, text: ' ' };
const updated: Report = workspace.update('draft.json', [edit]);
const replaced: Report = workspace.update('draft.json', draft);
const later: Promise<Report> = workspace.updateAsync('draft.json', [edit]);
// @ts-expect-error: an edit has a range
workspace.update('draft.json', [{ text: '' }]);
const text: string | undefined = workspace.text('draft.json');
const paths: string[] = workspace.paths();
const full: Promise<Report> = workspace.reportAsync('draft.json');
const checked: Promise<Report> = checkAsync(Buffer.from(draft));
workspace.close('draft.json');
void [updated, replaced, later, text, paths, full, checked];
