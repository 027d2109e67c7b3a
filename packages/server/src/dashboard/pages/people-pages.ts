import { html } from "hono/html";
import type { TraceGroupKind, TraceGroupSummary } from "../../store/trace-groups.ts";
import type { DashboardApi } from "../dashboard-api.ts";
import { count, percent, when } from "../format.ts";
import { Labels } from "../labels.ts";
import type { Markup } from "../page-shell.ts";
import { type TracePage, traceRows } from "./traces-page.ts";

/** Most traces a session or user page lists. */
const PAGE = 200;

/** One session: its traces in the order they ran. */
export async function sessionPage(api: DashboardApi, id: string): Promise<Markup> {
  const [page, labels] = await Promise.all([
    api.get<TracePage>(`/traces?session=${encodeURIComponent(id)}&order=asc&limit=${PAGE}`),
    Labels.load(api),
  ]);
  if (page.data.length === 0) return html`<p class="muted">No traces in this session.</p>`;
  const users = [...new Set(page.data.flatMap((t) => (t.userId ? [t.userId] : [])))];
  return html`<p data-figure="session-traces">${count(page.data.length)}${page.nextCursor ? "+" : ""} traces, in the order they ran${users.length ? html`, for ${users.map((u) => html`<a href="/ui/users/${encodeURIComponent(u)}">${u}</a> `)}` : ""}.</p>
${traceRows(page.data, labels)}
${page.nextCursor ? html`<p><a href="/ui/traces?session=${encodeURIComponent(id)}">All of this session's traces</a></p>` : ""}`;
}

/** One user: their latest traces and the failure rate of the judged ones among them. */
export async function userPage(api: DashboardApi, id: string): Promise<Markup> {
  const [page, labels] = await Promise.all([
    api.get<TracePage>(`/traces?user=${encodeURIComponent(id)}&limit=${PAGE}`),
    Labels.load(api),
  ]);
  if (page.data.length === 0) return html`<p class="muted">No traces for this user.</p>`;
  const failed = page.data.filter((t) => t.verdict?.status === "failed").length;
  const passed = page.data.filter((t) => t.verdict?.status === "passed").length;
  return html`<div class="cards">
<div class="card"><div class="label">Latest traces</div><div class="value" data-figure="user-traces">${count(page.data.length)}${page.nextCursor ? "+" : ""}</div></div>
<div class="card"><div class="label">Failed</div><div class="value" data-figure="user-failures">${count(failed)}</div></div>
<div class="card"><div class="label">Failure rate (of passed or failed)</div><div class="value" data-figure="user-failure-rate">${percent(failed + passed > 0 ? failed / (failed + passed) : null)}</div></div>
</div>
${traceRows(page.data, labels)}
${page.nextCursor ? html`<p><a href="/ui/traces?user=${encodeURIComponent(id)}">All of this user's traces</a></p>` : ""}`;
}

/** Sessions or users per index page, unless the URL's `limit` (1-500) asks for another number. */
const INDEX_PAGE = 50;

/** The index of every session or every user: traces, verdicts, first and last trace, paged by cursor in the URL. */
async function groupIndex(
  api: DashboardApi,
  kind: TraceGroupKind,
  query: Record<string, string>,
): Promise<Markup> {
  const limit =
    /^\d{1,3}$/.test(query.limit ?? "") && Number(query.limit) >= 1 && Number(query.limit) <= 500
      ? Number(query.limit)
      : INDEX_PAGE;
  const at = new URLSearchParams({ limit: String(limit), ...(query.cursor ? { cursor: query.cursor } : {}) });
  const page = await api.get<{ data: TraceGroupSummary[]; nextCursor: string | null }>(`/${kind}s?${at}`);
  const others = kind === "session" ? "Users" : "Sessions";
  const next = new URLSearchParams({ ...(limit !== INDEX_PAGE ? { limit: String(limit) } : {}) });
  const first = `/ui/${kind}s${next.size ? `?${next}` : ""}`;
  if (page.nextCursor) next.set("cursor", page.nextCursor);
  if (page.data.length === 0)
    return html`<p class="muted" data-figure="${kind}-count">No ${kind}s${query.cursor ? " on this page" : " yet: traces name theirs in sessionId and userId (x-arc-session and x-arc-user through the gateway)"}.</p>`;
  return html`<p data-figure="${kind}-count">${count(page.data.length)} ${kind}s on this page, the latest seen first${page.nextCursor ? "; more on the next" : ""}.</p>
<table aria-label="${kind === "session" ? "Sessions" : "Users"}">
<thead><tr><th>${kind === "session" ? "Session" : "User"}</th><th class="num">Traces</th><th class="num">Failed</th><th class="num">Failure rate (of passed or failed)</th><th class="num">${others}</th><th>First seen</th><th>Last seen</th></tr></thead>
<tbody>${page.data.map(
    (g) =>
      html`<tr data-${kind}="${g.id}"><td><a href="/ui/${kind}s/${encodeURIComponent(g.id)}">${g.id}</a></td><td class="num" data-figure="traces">${count(g.traces)}</td><td class="num" data-figure="failed">${count(g.failed)}</td><td class="num" data-figure="failure-rate">${percent(g.failureRate)}</td><td class="num">${count(g.others)}</td><td>${when(g.firstSeen)}</td><td>${when(g.lastSeen)}</td></tr>`,
  )}</tbody></table>
<p class="pager">${query.cursor ? html`<a href="${first}">First page</a>` : ""}${
    page.nextCursor ? html`<a href="/ui/${kind}s?${next}" rel="next">Next page →</a>` : ""
  }</p>`;
}

/** Sessions: every session, the latest seen first, each linking to its traces in order. */
export function sessionsPage(
  api: DashboardApi,
  _param: string,
  query: Record<string, string>,
): Promise<Markup> {
  return groupIndex(api, "session", query);
}

/** Users: every user, the latest seen first, each linking to their traces and failure rate. */
export function usersPage(api: DashboardApi, _param: string, query: Record<string, string>): Promise<Markup> {
  return groupIndex(api, "user", query);
}
