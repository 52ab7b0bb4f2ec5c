// Uses the API from CommonJS TypeScript (`require`); type-checked by test/types.test.mjs.

import little = require('@little-stack/compiler');

const report: little.Report = little.check('{}', { path: 'empty.json' });
const codes: string[] = report.files.flatMap((f) => f.diagnostics.map((d) => d.code));
const workspace: little.Workspace = new little.Workspace();
const error: little.LittleError | undefined = undefined;
// @ts-expect-error: explain takes a code's name
little.explain(42);
export = { codes, workspace, error };
