import { html } from "hono/html";
import type { DashboardApi } from "../dashboard-api.ts";
import { count, percent } from "../format.ts";
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
