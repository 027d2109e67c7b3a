/** The GET and DELETE routes of `arc serve` as the fuzz suite calls them: parameters that exist, query keys read. */
import { traceFilters } from "../../../dashboard/pages/traces-page.ts";
import type { Ctx, RouteSpec } from "./route-spec.ts";

const traceIds = (x: Ctx) => [...x.ids.traces, x.ready.fixture.traceId];
const modelIds = (x: Ctx) => [...x.ids.models.map((m) => m.id), "cand", "prod"];
/** The trace list's query keys: `GET /v1/traces` and the dashboard's Traces page read the same filters. */
const TRACE_FILTERS = [...traceFilters, "cursor"];
const TRACE_QUERY = [...TRACE_FILTERS, "model", "status", "order", "limit"];
const REVIEW_QUEUES = () => ["judge-disagreements", "unlabelled", "spot-checks"];
/** A user and a session the fuzzed traces name, and one no trace names. */
const PEOPLE = () => ["user-1", "session-1", "nobody"];

/** The query keys of the Sessions and Users index, `GET /v1/sessions` and `/v1/users` as their pages. */
const INDEX_QUERY = ["limit", "cursor"];
/** Values of the index's query keys: its page sizes' bounds, and a cursor of the server's form (a time and a trace id). */
const INDEX_VALUES = {
  limit: () => ["1", "500"],
  cursor: () => [Buffer.from(JSON.stringify(["2026-01-01T00:00:00.000Z", "trace-1"])).toString("base64url")],
};

/** The dashboard's pages, read with the signed-in tenant's session cookie. */
const PAGES: RouteSpec[] = [
  ["/ui"],
  ["/ui/analytics", ["hours"]],
  ["/ui/datasets"],
  ["/ui/datasets/:id", [], (x: Ctx) => x.ids.datasets],
  ["/ui/deployments"],
  ["/ui/deployments/:id", [], (x: Ctx) => x.ids.deployments],
  ["/ui/deployments/:id/promote", [], (x: Ctx) => x.ids.deployments],
  ["/ui/deployments/:id/rollback", [], (x: Ctx) => x.ids.deployments],
  ["/ui/judges"],
  ["/ui/models"],
  ["/ui/models/:id", [], modelIds],
  ["/ui/patterns"],
  ["/ui/patterns/:id", [], (x: Ctx) => x.ids.patterns],
  ["/ui/reviews"],
  ["/ui/reviews/:id", [], REVIEW_QUEUES],
  ["/ui/runs"],
  ["/ui/runs/:id", [], (x: Ctx) => x.ids.runs],
  ["/ui/sessions", INDEX_QUERY],
  ["/ui/sessions/:id", [], PEOPLE],
  ["/ui/teaching"],
  ["/ui/tenants"],
  ["/ui/traces", TRACE_FILTERS],
  ["/ui/traces/:id", ["queue"], traceIds],
  ["/ui/users", INDEX_QUERY],
  ["/ui/users/:id", [], PEOPLE],
].map(
  ([path, query, param]): RouteSpec => ({
    method: "GET",
    path: path as string,
    key: "session",
    runs: 6,
    ...(query ? { query: query as string[] } : {}),
    ...(param ? { params: [param as (x: Ctx) => string[]] } : {}),
  }),
);

/** Every GET route `arc serve` registers. */
export const GET_ROUTES: RouteSpec[] = [
  { method: "GET", path: "/", key: "none", runs: 4 },
  { method: "GET", path: "/health", key: "none", runs: 4 },
  { method: "GET", path: "/metrics", key: "none", runs: 6 },
  { method: "GET", path: "/ui/login", key: "none", runs: 4 },
  { method: "GET", path: "/ui/assets/dashboard.css", key: "none", runs: 4 },
  { method: "GET", path: "/ui/assets/live.js", key: "none", runs: 4 },
  ...PAGES,
  { method: "GET", path: "/v1/admin/tenants", key: "admin" },
  {
    method: "GET",
    path: "/v1/admin/tenants/:tenant/keys",
    key: "admin",
    params: [(x) => [x.ready.tenant.name, x.ready.bystander.name, x.ready.tenant.id]],
  },
  { method: "GET", path: "/v1/analytics", query: ["since", "until", "fixWindowDays"] },
  { method: "GET", path: "/v1/analytics/settings" },
  {
    method: "GET",
    path: "/v1/annotations",
    query: ["traceId", "limit"],
    queryValues: { traceId: traceIds, limit: () => ["1", "1000"] },
  },
  { method: "GET", path: "/v1/dataset-schedules" },
  { method: "GET", path: "/v1/datasets", query: ["kind", "limit"] },
  { method: "GET", path: "/v1/datasets/:id", params: [(x) => x.ids.datasets], owned: true },
  {
    method: "GET",
    path: "/v1/datasets/:id/export",
    params: [(x) => x.ids.datasets],
    query: ["format"],
    queryValues: { format: () => ["jsonl", "chat", "preferences", "verl-parquet"] },
    owned: true,
  },
  { method: "GET", path: "/v1/dead-letters" },
  { method: "GET", path: "/v1/deployments" },
  { method: "GET", path: "/v1/deployments/:id", params: [(x) => x.ids.deployments], owned: true },
  { method: "GET", path: "/v1/detectors" },
  { method: "GET", path: "/v1/images/:ref", params: [() => [`sha256-${"0".repeat(64)}`]] },
  { method: "GET", path: "/v1/judges" },
  {
    method: "GET",
    path: "/v1/model-versions",
    query: ["status"],
    queryValues: { status: () => ["candidate", "validated", "promoted", "rejected", "rolled_back"] },
  },
  { method: "GET", path: "/v1/model-versions/:id", params: [modelIds], owned: true },
  { method: "GET", path: "/v1/models" },
  {
    method: "GET",
    path: "/v1/models/:id{.+}",
    params: [(x) => ["arc", "prod", "cand", ...x.ids.models.map((m) => m.id), "a/b/c"]],
  },
  { method: "GET", path: "/v1/orchestrator" },
  { method: "GET", path: "/v1/patterns", query: ["modelVersion", "class", "limit"] },
  {
    method: "GET",
    path: "/v1/patterns/:id",
    params: [(x) => x.ids.patterns],
    query: ["traceId"],
    queryValues: { traceId: traceIds },
    owned: true,
  },
  { method: "GET", path: "/v1/release-settings" },
  { method: "GET", path: "/v1/review-queues" },
  {
    method: "GET",
    path: "/v1/review-queues/:queue",
    params: [REVIEW_QUEUES],
    query: ["limit"],
  },
  { method: "GET", path: "/v1/runs", query: ["status"] },
  { method: "GET", path: "/v1/runs/:id", params: [(x) => x.ids.runs], owned: true },
  { method: "GET", path: "/v1/runs/:id/logs", params: [(x) => x.ids.runs], query: ["tail"], owned: true },
  { method: "GET", path: "/v1/sessions", query: INDEX_QUERY, queryValues: INDEX_VALUES },
  { method: "GET", path: "/v1/task-families" },
  { method: "GET", path: "/v1/teaching" },
  {
    method: "GET",
    path: "/v1/traces",
    query: TRACE_QUERY,
    queryValues: {
      status: () => ["ok", "error"],
      verdict: () => ["failed", "passed", "unknown", "unjudged"],
      order: () => ["asc", "desc"],
      limit: () => ["1", "500"],
      model: () => ["arc-small"],
    },
  },
  { method: "GET", path: "/v1/traces/:id", params: [traceIds], owned: true },
  { method: "GET", path: "/v1/traffic", query: ["hours", "buckets"] },
  { method: "GET", path: "/v1/users", query: INDEX_QUERY, queryValues: INDEX_VALUES },
  { method: "GET", path: "/v1/verdicts", query: ["traceId"], queryValues: { traceId: traceIds } },
];

/** Every DELETE route `arc serve` registers; they run last, on what the other routes made. */
export const DELETE_ROUTES: RouteSpec[] = [
  {
    method: "DELETE",
    path: "/v1/admin/keys/:id",
    key: "admin",
    params: [(x) => x.ids.keys],
    readBack: () => [{ path: "/v1/admin/tenants" }],
  },
  {
    method: "DELETE",
    path: "/v1/dataset-schedules/:name",
    params: [(x) => [...x.ids.schedules, "nightly"]],
    owned: true,
    readBack: () => [{ path: "/v1/dataset-schedules", must: 200 }],
  },
  {
    method: "DELETE",
    path: "/v1/task-families/:env",
    params: [(x) => [...x.ids.families, "support", "toolcall"]],
    owned: true,
    readBack: () => [{ path: "/v1/task-families", must: 200 }],
  },
  {
    method: "DELETE",
    path: "/v1/teaching",
    readBack: () => [{ path: "/v1/teaching", must: 200 }],
  },
];
