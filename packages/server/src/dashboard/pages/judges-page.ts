import type { Rubric } from "@arc/core";
import { html } from "hono/html";
import type { JudgeModel } from "../../judges/judge-store.ts";
import type { DashboardApi } from "../dashboard-api.ts";
import { count } from "../format.ts";
import type { Markup } from "../page-shell.ts";

/** Judges: the tenant's rubric (criteria, failure classes, severity) and the model that runs it. */
export async function judgesPage(api: DashboardApi): Promise<Markup> {
  const { rubric, model } = await api.get<{ rubric: Rubric | null; model: JudgeModel | null }>("/judges");
  return html`<h2>Model</h2>
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
