import type { StepRecord } from "@arc/rl";
import { html } from "hono/html";
import type { TenantRun } from "../../orchestrator/run-store.ts";
import { lineChart } from "../charts.ts";
import type { DashboardApi } from "../dashboard-api.ts";
import { dataTable } from "../data-table.ts";
import { count, figure, when } from "../format.ts";
import type { Markup } from "../page-shell.ts";

const runLink = (id: string) => html`<a href="/ui/runs/${encodeURIComponent(id)}">${id}</a>`;

/** A run's progress as a `<progress>` bar and `step / total`. */
function progress(run: TenantRun): Markup {
  if (!run.totalSteps) return html`${count(run.step)} steps`;
  return html`<progress max="${run.totalSteps}" value="${run.step}" aria-label="${run.id} progress"></progress>
${count(run.step)} / ${count(run.totalSteps)}`;
}

/** Runs: every training run with its status, progress and latest figures. */
export async function runsPage(api: DashboardApi): Promise<Markup> {
  const { data } = await api.get<{ data: TenantRun[] }>("/runs");
  if (data.length === 0) return html`<p class="muted">No training runs yet.</p>`;
  return html`<section id="runs-live" data-live aria-label="Runs"><table>
<thead><tr><th>Run</th><th>Status</th><th>Progress</th><th class="num">Loss</th><th class="num">Reward</th><th>Candidate</th><th>Created</th></tr></thead>
<tbody>${data.map(
    (r) =>
      html`<tr data-run="${r.id}"><td>${runLink(r.id)}</td><td><span class="status ${r.status}">${r.status}</span></td><td>${progress(r)}</td><td class="num">${figure(r.metrics.loss)}</td><td class="num">${figure(r.metrics.reward)}</td><td>${r.candidateId ? html`<a href="/ui/models/${encodeURIComponent(r.candidateId)}">${r.candidateId}</a>` : "–"}</td><td>${when(r.createdAt)}</td></tr>`,
  )}</tbody>
</table></section>`;
}

/** One run: live loss and reward curves from its step records, progress, lineage and settings. */
export async function runPage(api: DashboardApi, id: string): Promise<Markup> {
  const { run, records } = await api.get<{ run: TenantRun; records: StepRecord[] }>(
    `/runs/${encodeURIComponent(id)}`,
  );
  const curve = (name: string, pick: (r: StepRecord) => number | null | undefined) => ({
    name,
    points: records.flatMap((r) => {
      const y = pick(r);
      return typeof y === "number" && Number.isFinite(y) ? [{ x: r.step, y }] : [];
    }),
  });
  return html`<section id="run-live" data-live aria-label="Progress">
<p><span class="status ${run.status}" data-figure="run-status">${run.status}</span> ${progress(run)}
${run.error ? html`<span class="error">${run.error}</span>` : ""}</p>
<div class="charts">
${lineChart({
  title: "Loss by step",
  series: [curve("loss", (r) => r.loss)],
  xLabel: "step",
  yLabel: "loss",
  xIntegers: true,
  empty: "No loss recorded yet.",
})}
${lineChart({
  title: "Reward by step",
  series: [curve("reward", (r) => r.reward), curve("held-out failure rate", (r) => r.evalFailureRate)],
  xLabel: "step",
  yLabel: "reward / failure rate",
  yMin: 0,
  xIntegers: true,
  empty: "No reward recorded yet.",
})}
</div>
</section>
<h2>Lineage</h2>
<p>From ${run.baseModelId ? html`<a href="/ui/models/${encodeURIComponent(run.baseModelId)}">${run.baseModelId}</a>` : "–"}
on ${run.datasets.map((d) => html`<a href="/ui/datasets/${encodeURIComponent(d.id)}">${d.id}</a> (${d.kind}, ${count(d.rows)} rows) `)}
drawn from ${count(run.sourceTraceCount)} production traces${
    run.candidateId
      ? html`; its candidate is <a href="/ui/models/${encodeURIComponent(run.candidateId)}">${run.candidateId}</a>`
      : ""
  }.</p>
<h2>Recipe</h2>
<p><code>${run.recipePath}</code> ${run.overrides.map((o) => html`<code>${o}</code> `)}</p>
<h2>Latest figures</h2>
${dataTable(run.metrics)}`;
}
