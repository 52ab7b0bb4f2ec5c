// The ES module entry of @little-stack/compiler: the same API as index.cjs, which it loads.
import little from './index.cjs';

export const {
  LittleError,
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
  plan,
  planEvents,
  fix,
  verify,
  events,
} = little;
export default little;
