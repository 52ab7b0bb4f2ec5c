// The types of @little-stack/compiler. Written by hand, and held to what little gives:
// test/types.test.mjs types the real output of every example (reports, compiled documents,
// codes, snapshot, lock) as literals against these declarations, where TypeScript refuses
// a missing, extra or mistyped field, and type-checks test/usage.mts and test/usage.cts.

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/**
 * A document handed to little: JSON text, its bytes (which need not be UTF-8: bytes that
 * are not reach little's own `parse.invalid_json`), or a JSON value, which is serialized.
 * Typed as any object, so that interfaces and Zod's JSON Schemas pass; at run time a
 * function, symbol, bigint, undefined in an array, NaN, a cycle or an object that is not
 * plain data anywhere in it is refused with a LittleError naming its path.
 */
export type DocumentInput = string | Uint8Array | ArrayBuffer | number | boolean | null | object;

/** A draft or an LWIR, as text or bytes: the report's spans are positions in it. */
export type SourceInput = string | Uint8Array | ArrayBuffer;

/** The documents a check runs against; each absent one is "not given". */
export interface Documents {
  /** The node catalog; the one embedded in little when absent. */
  catalog?: DocumentInput | undefined;
  /** The tenant context; without it the tenant checks are skipped (the report says so). */
  context?: DocumentInput | undefined;
  /** The agent binding rows. */
  bindings?: DocumentInput | undefined;
  /** The WorkflowDefinitionSnapshot an LWIR is checked against. */
  snapshot?: DocumentInput | undefined;
}

export interface CheckOptions extends Documents {
  /** The path the report names the document by; `"<input>"` when absent. */
  path?: string | null | undefined;
}

export type WorkspaceOptions = Documents;

export type Severity = 'error' | 'warning' | 'info';
export type DocumentKind = 'draft' | 'catalog' | 'context' | 'bindings' | 'lwir' | 'definition';

/** A span: byte offsets into the UTF-8 text, and the 1-based line and column (in characters) of its start. */
export interface Span {
  start: number;
  end: number;
  line: number;
  column: number;
}

export interface Related {
  message: string;
  /** A JSONPath into the document. */
  path: string;
  span?: Span;
}

/** The nodes and edges of a cycle, in order. */
export interface Witness {
  nodes: string[];
  edges: string[];
}

/** One finding. Fields that do not apply are absent (not null). */
export interface Diagnostic {
  severity: Severity;
  /** Stable, e.g. `graph.cycle`; `explain(code)` has its page. */
  code: string;
  blocking: boolean;
  message: string;
  nodeId?: string;
  edgeId?: string;
  /** A JSONPath into the document, e.g. `$.edges[1]`. */
  path?: string;
  span?: Span;
  help?: string;
  related?: Related[];
  witness?: Witness;
}

/** What a clean draft issues. */
export interface DraftCandidate {
  /** `cand_…`; absent when the draft has too little to name one. */
  id?: string;
  workflowId: string;
  draftId: string;
  revision: number;
  catalogVersion: string;
  authoredGraphHash: string;
  topologyHash: string;
  /** `none` (no agents), `unknown` (no binding rows given) or `accepted`. */
  bindingStatus: 'none' | 'unknown' | 'accepted';
}

/** What a clean LWIR issues: its WorkflowVersion. */
export interface WorkflowVersion {
  /** `wfver_…` */
  id: string;
  hash: string;
  canonicalizer: string;
}

export type Candidate = DraftCandidate | WorkflowVersion;

/** One checked file. */
export interface FileReport {
  path: string;
  /** null when the text is no document little knows (or not JSON). */
  document: DocumentKind | null;
  diagnostics: Diagnostic[];
  /** null while a diagnostic blocks, and in a workspace's `open`/`update` (see `report`). */
  candidate: Candidate | null;
}

export interface Summary {
  files: number;
  errors: number;
  warnings: number;
  blocking: number;
}

/** `little-report/v1`: what `little check --format json` prints. */
export interface Report {
  format: 'little-report/v1';
  files: FileReport[];
  summary: Summary;
}

export interface ContractPort {
  port: string;
  types: string[];
  required: boolean;
}

export interface Contracts {
  version: string;
  inputs: ContractPort[];
  outputs: ContractPort[];
  artifacts: { id: string; port: string; types: string[] }[];
}

export interface TopologyNode {
  id: string;
  family: string;
  kind: 'trigger' | 'agent' | 'action' | 'router' | 'gate' | 'annotation' | 'group';
  semantic: string;
  title: string | null;
  description: string | null;
  /** The authored flags, and `workerSlot`. */
  flags: { workerSlot: boolean; [flag: string]: boolean };
  config: JsonObject;
  contracts: Contracts | null;
  packages: { name: string; version: string; digest: string }[];
  agent: { agentId: string; revision: number } | null;
}

export interface Transition {
  id: string;
  from: { node: string; port: string };
  to: { node: string; port: string };
  kind: 'forward' | 'branch' | 'retry';
  retry: { maxAttempts: number; backoffMs: number } | null;
  branch: { label: string } | null;
  mapping: { output: string; input: string; artifacts: string[] } | null;
}

export interface Topology {
  workflowId: string;
  catalogVersion: string;
  draftId: string;
  revision: number;
  authoredGraphHash: string;
  /** Node positions by node id. */
  layout: { [nodeId: string]: { x: number; y: number } };
  nodes: TopologyNode[];
  transitions: Transition[];
}

/** `little-compiled/v1`: what `little compile` writes. */
export interface Compiled {
  format: 'little-compiled/v1';
  candidate: DraftCandidate;
  topology: Topology;
  diagnostics: Diagnostic[];
}

/** One entry of `codes()`, in `little explain`'s order. */
export interface CodeInfo {
  code: string;
  severity: Severity;
  blocking: boolean;
  summary: string;
}

export interface ModelSlot {
  id: string;
  providerId: string;
  modelId: string;
  description: string;
}

export type Access = 'rw' | 'ro' | 'none';

/** A WorkflowDefinitionSnapshot (`little snapshot`); see `schema("snapshot")`. */
export interface DefinitionSnapshot {
  id: string;
  description: string;
  inputSchemaHash: string;
  outputSchemaHash: string;
  modelSlots: ModelSlot[];
  plannerConfig: { modelSlotId: string; harnessId: string; systemHash: string; skillsHash: string };
  workerConfig: { harnessId: string; skillsHash: string };
  /** The ids of the tools every session gets, sorted. */
  globalTools: string[];
  memoryConfig: { workflow: Access; org: Access; attached: { id: string; access: Access }[] };
}

/** What `lock` registers (`little lock`). */
export interface Registration {
  workflowVersion: WorkflowVersion & {
    /** The canonical text `hash` is the hash of. */
    canonicalJson: string;
    lwir: JsonObject;
  };
  lock: {
    workflowVersionId: string;
    workflowVersionHash: string;
    lwirVersionId: string;
    lwirHash: string;
    workflowDefinitionHash: string;
    inputSchemaHash: string;
    requestedOutput: JsonObject;
    requestedOutputHash: string;
    capabilityManifest: JsonObject;
    capabilityManifestHash: string;
    modelSlots: { id: string; providerId: string; modelId: string }[];
    tools: JsonObject[];
    validationHash: string;
  };
}

export type ErrorCode =
  | 'input.invalid'
  | 'json.invalid'
  | 'code.unknown'
  | 'schema.unknown'
  | 'document.kind'
  | 'blocked'
  | 'file.unknown'
  | 'edit.invalid'
  | 'internal';

/**
 * Why a call could not give its result. `code` is stable, for programs; `path` says what
 * it is about (an option such as `catalog`, a path into a value handed in such as
 * `definition.tools[0].execute`, a workspace file, an edit), or is null.
 */
export declare class LittleError extends Error {
  readonly name: 'LittleError';
  readonly code: ErrorCode;
  readonly path: string | null;
  /** With `blocked`: the report of what blocks. */
  readonly report?: Report;
}

/** `little check` of one draft or LWIR: the report `little check --format json` prints. */
export declare function check(text: SourceInput, options?: CheckOptions | null): Report;
/** `check` on libuv's thread pool, off the event loop. */
export declare function checkAsync(text: SourceInput, options?: CheckOptions | null): Promise<Report>;
/** `little compile` of a draft; a `blocked` LittleError (with the report) when a diagnostic blocks. */
export declare function compile(text: SourceInput, options?: CheckOptions | null): Compiled;
export declare function compileAsync(text: SourceInput, options?: CheckOptions | null): Promise<Compiled>;
/** The page of one code, as `little explain CODE` prints it. */
export declare function explain(code: string): string;
/** Every code little reports. */
export declare function codes(): CodeInfo[];
/** `sha256:` of the RFC 8785 canonical form of a JSON document (`little hash`). */
export declare function hash(document: DocumentInput): string;
/** The JSON Schema of a document format (`little schema NAME`). */
export declare function schema(name: string): JsonObject;
/** The names `schema` knows. */
export declare function schemaNames(): string[];
/** The WorkflowDefinitionSnapshot of a definition (`little snapshot`). */
export declare function snapshot(definition: DocumentInput): DefinitionSnapshot;
/** Validates an LWIR against a definition, then registers and locks it (`little lock`). */
export declare function lock(lwir: DocumentInput, definition: DocumentInput): Registration;

/** An LSP position: a 0-based line, and a column in UTF-16 code units (a JavaScript string's). */
export interface Position {
  line: number;
  character: number;
}

/** An LSP-style edit: the text in `range` replaced by `text`. */
export interface Edit {
  range: { start: Position; end: Position };
  text: string;
}

/**
 * Documents held open against one set of workspace documents, as an editor holds them:
 * an edit re-checks only what it touches. Calls take effect in the order they are made,
 * the asynchronous ones included (a synchronous call waits for those made before it).
 */
export declare class Workspace {
  constructor(options?: WorkspaceOptions | null);
  /** Opens (or replaces) a document: its report, diagnostics only (`candidate` is null). */
  open(path: string, text: string): Report;
  openAsync(path: string, text: string): Promise<Report>;
  /** Changes an open document, by its new text or by edits applied in order. */
  update(path: string, change: string | Edit[]): Report;
  /** `update` on libuv's thread pool, off the event loop. */
  updateAsync(path: string, change: string | Edit[]): Promise<Report>;
  /** Closes a document; a later call on it is a `file.unknown` LittleError. */
  close(path: string): void;
  /** The full report of an open document, with its candidate. */
  report(path: string): Report;
  reportAsync(path: string): Promise<Report>;
  /** The text a document has now; undefined when it is not open. */
  text(path: string): string | undefined;
  /** The open documents' paths, sorted. */
  paths(): string[];
}
