import type { FailurePattern } from "@arc/core";
import { html } from "hono/html";
import type { DatasetInfo } from "../../failures/dataset-store.ts";
import type { TenantRun } from "../../orchestrator/run-store.ts";
import { lineChart } from "../charts.ts";
import type { DashboardApi } from "../dashboard-api.ts";
import { count, when } from "../format.ts";
import { Labels } from "../labels.ts";
import type { Markup } from "../page-shell.ts";

/** A pattern's trend: members in the last 7 days against the 7 before (by the trace's day). */
export function weeklyTrend(pattern: FailurePattern, now = new Date()): { last: number; before: number } {
  const day = (offset: number) => new Date(now.getTime() - offset * 86_400_000).toISOString().slice(0, 10);
  let last = 0;
  let before = 0;
  for (let d = 0; d < 14; d++) {
    const n = pattern.countsByDay[day(d)] ?? 0;
    if (d < 7) last += n;
    else before += n;
  }
  return { last, before };
}

function trendText(t: { last: number; before: number }): string {
  if (t.last === t.before) return `steady (${t.last} this week)`;
  return `${t.last > t.before ? "growing" : "shrinking"} (${t.before} → ${t.last})`;
}

/** A link to a record's page, named `text`, its id on hover. */
const link = (kind: string, id: string, text = id) =>
  html`<a href="/ui/${kind}/${encodeURIComponent(id)}" title="${id}">${text}</a>`;

/** Patterns: every pattern, largest first, with its trend and the datasets and runs that draw on it. */
export async function patternsPage(api: DashboardApi): Promise<Markup> {
  const [patterns, datasets, runs] = await Promise.all([
    api.get<{ data: FailurePattern[]; verdicts: Record<string, number>; pending: number }>(
      "/patterns?limit=1000",
    ),
    api.get<{ data: DatasetInfo[] }>("/datasets"),
    api.get<{ data: TenantRun[] }>("/runs"),
  ]);
  if (patterns.data.length === 0) return html`<p class="muted">No failure patterns yet.</p>`;
  return html`<p>${count(patterns.data.length)} patterns over ${count(patterns.verdicts.failed ?? 0)} failed traces.</p>
<table>
<thead><tr><th>Pattern</th><th>Class</th><th class="num">Failures</th><th>Trend (7 days)</th><th>Datasets</th><th>Runs</th></tr></thead>
<tbody>${patterns.data.map((p) => {
    const ds = datasets.data.filter((d) => d.patternIds.includes(p.id));
    const rs = runs.data.filter((r) => r.patterns.includes(p.id));
    return html`<tr data-pattern="${p.id}"><td><a href="/ui/patterns/${encodeURIComponent(p.id)}" title="${p.id}">${p.label}</a></td><td>${p.class}</td><td class="num" data-figure="failures">${count(p.count)}</td><td>${trendText(weeklyTrend(p))}</td><td>${ds.length ? ds.map((d) => html`${link("datasets", d.id, `${d.kind} (${count(d.rowCount)} rows)`)} `) : "–"}</td><td>${rs.length ? rs.map((r) => html`${link("runs", r.id, `${r.status} run`)} `) : "–"}</td></tr>`;
  })}</tbody>
</table>`;
}

/** One pattern: counts per day, per model version, examples and recent member traces. */
export async function patternPage(api: DashboardApi, id: string): Promise<Markup> {
  const [p, labels] = await Promise.all([
    api.get<
      FailurePattern & { recentTraces: { traceId: string; modelVersion: string | null; startedAt: string }[] }
    >(`/patterns/${encodeURIComponent(id)}`),
    Labels.load(api),
  ]);
  const days = Object.keys(p.countsByDay).sort();
  const first = days.length ? Date.parse(days[0]) : 0;
  return html`<p><strong>${p.label}</strong> · class ${p.class} · ${count(p.count)} failures · first seen
${when(p.firstSeen)} · last seen ${when(p.lastSeen)}</p>
${lineChart({
  title: "Failures per day",
  series: [
    {
      name: p.label,
      points: days.map((d) => ({ x: (Date.parse(d) - first) / 86_400_000, y: p.countsByDay[d] })),
    },
  ],
  xLabel: `days since ${days[0] ?? ""}`,
  yLabel: "failures",
  yMin: 0,
  xIntegers: true,
  empty: "No failures recorded by day.",
})}
<h2>By model version</h2>
<table><thead><tr><th>Model version</th><th class="num">Failures</th></tr></thead>
<tbody>${Object.entries(p.countsByModelVersion).map(
    ([v, n]) => html`<tr><td>${labels.version(v)}</td><td class="num">${count(n)}</td></tr>`,
  )}</tbody></table>
<h2>Examples</h2>
<table><thead><tr><th>Trace</th><th>Question</th><th>Output</th><th>Evidence</th></tr></thead>
<tbody>${p.examples.map(
    (e) =>
      html`<tr><td>${link("traces", e.traceId)}</td><td>${e.question}</td><td><code>${e.output ?? ""}</code></td><td>${e.evidence ?? ""}</td></tr>`,
  )}</tbody></table>
<h2>Recent traces</h2>
<p><a href="/ui/traces?pattern=${encodeURIComponent(p.id)}">Every trace of this pattern</a></p>
<table><thead><tr><th>Trace</th><th>Model version</th><th>Started</th></tr></thead>
<tbody>${p.recentTraces.map(
    (t) =>
      html`<tr><td>${link("traces", t.traceId)}</td><td>${labels.version(t.modelVersion)}</td><td>${when(t.startedAt)}</td></tr>`,
  )}</tbody></table>`;
}
