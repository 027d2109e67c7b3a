export { type LinearRegExp, linearRegExp, linearRegExpEngine } from "./linear-regexp.ts";
export { DeadlineExceededError, runWithin, TimeBudget } from "./run-within.ts";
export { SCHEMA_BOUNDS } from "./schema-bounds.ts";
export { patternsProblem, type SchemaBoundsProblem, schemaBoundsProblem } from "./schema-bounds-problem.ts";
export { type SchemaCheck, TenantSchemas } from "./tenant-schemas.ts";
