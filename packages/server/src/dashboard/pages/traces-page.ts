import { html } from "hono/html";
import type { TraceSummary } from "../../store/trace-list.ts";
import type { DashboardApi } from "../dashboard-api.ts";
import { count, when } from "../format.ts";
import { Labels } from "../labels.ts";
import type { Markup } from "../page-shell.ts";

/** The filters the trace list takes from its URL, passed to `GET /v1/traces` under the same names. */
export const traceFilters = [
  "q",
  "from",
  "to",
  "modelVersion",
  "env",
  "verdict",
  "failureClass",
  "pattern",
  "user",
  "session",
  "tag",
  "minLatencyMs",
  "maxLatencyMs",
  "minTokens",
  "maxTokens",
] as const;

/** What `GET /v1/traces` answers. */
export interface TracePage {
  data: TraceSummary[];
  nextCursor: string | null;
}

/** The filters set in `query` (empty values dropped), with `cursor` when given. */
function filtersOf(query: Record<string, string>): URLSearchParams {
  const params = new URLSearchParams();
  for (const name of [...traceFilters, "cursor"]) {
    const value = query[name]?.trim();
    if (value) params.set(name, value);
  }
  return params;
}

/** A time from a `datetime-local` field (taken as UTC) or an ISO date-time, as the API wants it. */
function isoTime(value: string): string {
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(value) ? `${value}:00Z` : value;
}

/** A verdict as a coloured word with its failure class. */
export function verdictBadge(verdict: TraceSummary["verdict"]): Markup {
  if (!verdict) return html`<span class="status">not judged</span>`;
  return html`<span class="status ${verdict.status}">${verdict.status}</span>${verdict.failureClass ? html` ${verdict.failureClass}` : ""}`;
}

/** Milliseconds as `850 ms` or `2.4 s`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "–";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** What a trace was about: the first line of its text after its name, cut to 90 characters. */
function gist(t: TraceSummary): string {
  const lines = t.preview.split("\n");
  return ((lines[0] === t.name ? lines[1] : lines[0]) ?? "").slice(0, 90);
}

/** The rows of a trace table: start, what it was about, verdict, pattern, model version, who, latency, tokens. */
export function traceRows(traces: TraceSummary[], labels: Labels): Markup {
  return html`<table>
<thead><tr><th>Started</th><th>Trace</th><th>Verdict</th><th>Pattern</th><th>Model version</th><th>User</th><th>Session</th><th class="num">Latency</th><th class="num">Tokens</th><th class="num">Steps</th></tr></thead>
<tbody>${traces.map(
    (t) => html`<tr data-trace="${t.id}">
<td>${when(t.startedAt)}</td>
<td><a href="/ui/traces/${encodeURIComponent(t.id)}" title="${t.id}">${t.name ? html`<strong>${t.name}</strong> ` : ""}${gist(t) || t.id}</a></td>
<td data-figure="verdict">${verdictBadge(t.verdict)}</td>
<td>${labels.pattern(t.verdict?.patternId)}</td>
<td>${labels.version(t.modelVersion)}</td>
<td>${t.userId ? html`<a href="/ui/users/${encodeURIComponent(t.userId)}">${t.userId}</a>` : "–"}</td>
<td>${t.sessionId ? html`<a href="/ui/sessions/${encodeURIComponent(t.sessionId)}">${t.sessionId}</a>` : "–"}</td>
<td class="num">${duration(t.latencyMs)}</td>
<td class="num">${count(t.totalTokens)}</td>
<td class="num">${count(t.stepCount)}</td>
</tr>`,
  )}</tbody></table>`;
}

const field = (name: string, label: string, value: string | undefined, type = "text") =>
  html`<div><label for="f-${name}">${label}</label><input id="f-${name}" name="${name}" type="${type}" value="${value ?? ""}"></div>`;

function select(name: string, label: string, value: string | undefined, options: [string, string][]): Markup {
  return html`<div><label for="f-${name}">${label}</label><select id="f-${name}" name="${name}"><option value="">any</option>${options.map(
    ([v, text]) => html`<option value="${v}"${v === value ? " selected" : ""}>${text}</option>`,
  )}</select></div>`;
}

/**
 * Traces: every trace of the tenant, newest first, searched and filtered on the server and paged by cursor. The
 * filters are a GET form, so the URL holds the list's whole state (a link or reload shows the same page).
 */
export async function tracesPage(
  api: DashboardApi,
  _param: string,
  query: Record<string, string>,
): Promise<Markup> {
  const filters = filtersOf(query);
  const apiQuery = new URLSearchParams(filters);
  for (const name of ["from", "to"]) {
    const value = apiQuery.get(name);
    if (value) apiQuery.set(name, isoTime(value));
  }
  apiQuery.set("limit", "50");
  const [page, labels] = await Promise.all([api.get<TracePage>(`/traces?${apiQuery}`), Labels.load(api)]);
  const q = Object.fromEntries(filters);
  const next = new URLSearchParams(filters);
  if (page.nextCursor) next.set("cursor", page.nextCursor);
  const first = new URLSearchParams(filters);
  first.delete("cursor");
  return html`<form class="filters" method="get" action="/ui/traces" role="search" aria-label="Filter traces">
${field("q", "Text in messages and outputs", q.q, "search")}
${field("from", "Started from (UTC)", q.from, "datetime-local")}
${field("to", "Started before (UTC)", q.to, "datetime-local")}
${select(
  "modelVersion",
  "Model version",
  q.modelVersion,
  labels.allVersions().map((v) => [v.id, v.name]),
)}
${field("env", "Task family", q.env)}
${select("verdict", "Verdict", q.verdict, [
  ["failed", "failed"],
  ["passed", "passed"],
  ["unknown", "unknown"],
  ["unjudged", "not judged"],
])}
${field("failureClass", "Failure class", q.failureClass)}
${select(
  "pattern",
  "Pattern",
  q.pattern,
  labels.allPatterns().map((p) => [p.id, p.label]),
)}
${field("user", "User", q.user)}
${field("session", "Session", q.session)}
${field("tag", "Tag", q.tag)}
${field("minLatencyMs", "Latency at least (ms)", q.minLatencyMs, "number")}
${field("maxLatencyMs", "Latency at most (ms)", q.maxLatencyMs, "number")}
${field("minTokens", "Tokens at least", q.minTokens, "number")}
${field("maxTokens", "Tokens at most", q.maxTokens, "number")}
<div><button class="action" type="submit">Search</button> <a href="/ui/traces">Clear</a></div>
</form>
${
  page.data.length === 0
    ? html`<p class="muted" data-figure="trace-count">No traces match.</p>`
    : html`<p data-figure="trace-count">${count(page.data.length)} traces on this page${page.nextCursor ? ", more on the next" : ""}.</p>
${traceRows(page.data, labels)}`
}
<p class="pager">${filters.has("cursor") ? html`<a href="/ui/traces?${first}">First page</a>` : ""}${
    page.nextCursor ? html`<a href="/ui/traces?${next}" rel="next">Next page →</a>` : ""
  }</p>`;
}
