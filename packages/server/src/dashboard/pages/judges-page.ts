import type { Rubric } from "@arc/core";
import { html } from "hono/html";
import { LOW_CALIBRATION } from "../../analytics/recommendations.ts";
import type { JudgeModel, StoredCalibration } from "../../judges/judge-store.ts";
import type { DashboardApi } from "../dashboard-api.ts";
import { count, figure, when } from "../format.ts";
import type { Markup } from "../page-shell.ts";

/** Judges: the tenant's rubric (criteria, failure classes, severity), the model that runs it, its calibration. */
export async function judgesPage(api: DashboardApi): Promise<Markup> {
  const { rubric, model, calibration } = await api.get<{
    rubric: Rubric | null;
    model: JudgeModel | null;
    calibration: StoredCalibration | null;
  }>("/judges");
  return html`<h2>Calibration</h2>
${calibration ? calibrationTable(calibration) : html`<p class="muted">Not calibrated yet (<code>arc judges calibrate</code>): how well the judge agrees with your verifiers' and users' labels is unknown.</p>`}
<h2>Model</h2>
${
  model
    ? html`<p><code>${model.model}</code> on upstream <code>${model.upstream}</code>, at most
${count(model.callsPerMinute)} calls and ${count(model.tokensPerMinute)} tokens a minute.</p>`
    : html`<p class="muted">No judge model is set (<code>arc judges model &lt;upstream&gt; &lt;model&gt;</code>).</p>`
}
<h2>Rubric</h2>
${
  rubric
    ? html`<p>Version <strong data-figure="rubric-version">${rubric.version}</strong>.</p>
<h3>Criteria</h3>
<ol>${rubric.criteria.map((c) => html`<li>${c}</li>`)}</ol>
<h3>Failure classes</h3>
<table><thead><tr><th>Class</th><th>Severity</th><th>Description</th></tr></thead>
<tbody>${rubric.classes.map(
        (k) => html`<tr><td><code>${k.name}</code></td><td>${k.severity}</td><td>${k.description}</td></tr>`,
      )}</tbody></table>
${rubric.instructions ? html`<h3>Instructions</h3><p>${rubric.instructions}</p>` : ""}`
    : html`<p class="muted">No rubric is set (<code>arc judges set rubric.json</code>).</p>`
}`;
}

/** The latest calibration's figures, with the bounds under which analytics calls it low. */
function calibrationTable(c: StoredCalibration): Markup {
  const r = c.report;
  return html`<p>${when(c.at)}, rubric v${c.rubricVersion}, model <code>${c.model}</code>: ${count(r.judged)} of
${count(r.items)} labelled traces judged. Below an agreement of ${LOW_CALIBRATION.agreement} or a kappa of ${LOW_CALIBRATION.kappa}, analytics recommends a better judge.</p>
<table><thead><tr><th>Measure</th><th class="num">Value or precision</th><th class="num">Recall</th></tr></thead>
<tbody>
<tr><td>agreement</td><td class="num" data-figure="agreement">${figure(r.agreement)}</td><td></td></tr>
<tr><td>Cohen's kappa</td><td class="num" data-figure="kappa">${figure(r.kappa)}</td><td></td></tr>
<tr><td>failed (any class)</td><td class="num">${figure(r.failed.precision)}</td><td class="num">${figure(r.failed.recall)}</td></tr>
${r.classes.map((k) => html`<tr><td><code>${k.name}</code></td><td class="num">${figure(k.precision)}</td><td class="num">${figure(k.recall)}</td></tr>`)}
</tbody></table>`;
}
