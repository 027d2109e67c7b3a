export { type AuditEntry, appendAudit, listAudit, type NewAuditEntry } from "./audit-log.ts";
export type { Database, Queryable, Row } from "./database.ts";
export {
  type ApiKeyInfo,
  createApiKey,
  findPrincipal,
  listApiKeys,
  type Principal,
  revokeApiKey,
} from "./keys.ts";
export { migrate } from "./migrate.ts";
export {
  getModelVersion,
  listModelVersions,
  type ModelLineage,
  type ModelStatus,
  type ModelVersion,
  registerModelVersion,
  transitionModelVersion,
  type UpstreamModel,
} from "./model-registry.ts";
export { openDatabase } from "./open-database.ts";
export { createTenant, findTenant, listTenants, type Tenant } from "./tenants.ts";
export {
  getTrace,
  type InsertResult,
  insertFeedback,
  insertTraces,
  listTraces,
  type TraceQuery,
  type TraceSummary,
} from "./trace-store.ts";
