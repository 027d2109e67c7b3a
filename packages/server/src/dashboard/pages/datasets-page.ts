import { html } from "hono/html";
import type { DatasetInfo } from "../../failures/dataset-store.ts";
import type { DashboardApi } from "../dashboard-api.ts";
import { dataTable } from "../data-table.ts";
import { count, when } from "../format.ts";
import type { Markup } from "../page-shell.ts";

const patternLinks = (ids: string[]) =>
  ids.length ? ids.map((id) => html`<a href="/ui/patterns/${encodeURIComponent(id)}">${id}</a> `) : "–";

/** Datasets: every dataset with its kind, rows, lineage and maker. */
export async function datasetsPage(api: DashboardApi): Promise<Markup> {
  const { data } = await api.get<{ data: DatasetInfo[] }>("/datasets");
  if (data.length === 0) return html`<p class="muted">No datasets yet.</p>`;
  return html`<table>
<thead><tr><th>Dataset</th><th>Kind</th><th class="num">Rows</th><th class="num">Source traces</th><th>Patterns</th><th>Made by</th><th>Created</th></tr></thead>
<tbody>${data.map(
    (d) =>
      html`<tr data-dataset="${d.id}"><td><a href="/ui/datasets/${encodeURIComponent(d.id)}">${d.id}</a></td><td>${d.kind}</td><td class="num" data-figure="rows">${count(d.rowCount)}</td><td class="num">${count(d.sourceTraceIds.length)}</td><td>${patternLinks(d.patternIds)}</td><td>${d.createdBy}</td><td>${when(d.createdAt)}</td></tr>`,
  )}</tbody>
</table>`;
}

/** One dataset: its lineage, statistics and first rows. */
export async function datasetPage(api: DashboardApi, id: string): Promise<Markup> {
  const d = await api.get<DatasetInfo & { rows: unknown[] }>(`/datasets/${encodeURIComponent(id)}`);
  return html`<p>${d.kind} · ${count(d.rowCount)} rows · version <code>${d.version}</code> · made by ${d.createdBy} on ${when(d.createdAt)}</p>
<h2>Patterns</h2><p>${patternLinks(d.patternIds)}</p>
<h2>Statistics</h2>${dataTable(d.stats)}
<h2>First rows</h2>${dataTable(d.rows.slice(0, 5))}`;
}
