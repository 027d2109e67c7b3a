import { html } from "hono/html";
import type { Recommendation } from "../../analytics/recommendations.ts";
import type { TenantAnalytics } from "../../analytics/tenant-analytics.ts";
import { barChart } from "../charts.ts";
import type { DashboardApi } from "../dashboard-api.ts";
import { count, figure, percent } from "../format.ts";
import type { Markup } from "../page-shell.ts";
import { recommendationActions, recommendationPages } from "../recommendation-actions.ts";

const usd = (x: number | null) => (x === null ? "–" : `$${x.toFixed(x < 1 ? 4 : 2)}`);

/** A recommendation's button (a form posting to the dashboard, which makes the API call), or a link where it is done. */
function recommendationControl(r: Recommendation): Markup {
  const action = recommendationActions[r.kind];
  if (action)
    return html`<form class="inline" method="post" action="/ui/recommendations/${r.kind}"><input type="hidden" name="id" value="${r.ids[0] ?? ""}"><button class="action" type="submit">${action.label}</button></form>`;
  const page = recommendationPages[r.kind];
  return page ? html`<a class="action" href="${page.path}">${page.label}</a>` : html``;
}

/** Analytics: the last 28 days' learning analytics, as `GET /v1/analytics` gives them; `refusal` an action's refusal. */
export async function analyticsPage(
  api: DashboardApi,
  _param = "",
  _query = {},
  refusal?: string,
): Promise<Markup> {
  const a = await api.get<TenantAnalytics>("/analytics");
  const fix = a.fixSuccess;
  return html`${refusal ? html`<p class="error" role="alert">${refusal}</p>` : ""}<p class="muted">From ${a.window.since.slice(0, 10)} to ${a.window.until.slice(0, 10)}.</p>
<div class="cards">
<div class="card"><div class="label">Fix success rate</div><div class="value" data-figure="fix-rate">${percent(fix.rate)}</div><div class="label">${fix.fixed} of ${fix.tested} tested patterns</div></div>
<div class="card"><div class="label">Failures avoided</div><div class="value" data-figure="failures-avoided">${figure(a.cost.failuresAvoided, 1)}</div><div class="label">${a.cost.failuresAvoidedUsd === null ? "no cost per failure set" : usd(a.cost.failuresAvoidedUsd)}</div></div>
<div class="card"><div class="label">Token cost</div><div class="value" data-figure="cost">${usd(a.cost.totalUsd)}</div><div class="label">${a.cost.unpriced.length ? `no price: ${a.cost.unpriced.join(", ")}` : "every model priced"}</div></div>
</div>
<h2>Recommendations</h2>
${
  a.recommendations.length === 0
    ? html`<p class="muted">None.</p>`
    : html`<ul>${a.recommendations.map((r) => html`<li data-recommendation="${r.kind}"><strong>${r.kind.replaceAll("_", " ")}</strong>: ${r.reason} ${recommendationControl(r)}</li>`)}</ul>`
}
<h2>Patterns found per week</h2>
${barChart({
  title: "Patterns found per week",
  categories: a.patternsPerWeek.map((w) => w.week),
  series: [{ name: "new patterns", values: a.patternsPerWeek.map((w) => w.patterns) }],
  yLabel: "patterns",
  empty: "No new patterns in this window.",
})}
<h2>Fixes</h2>
<p>${fix.test}, ${a.window.fixWindowDays} days on each side of a promotion.</p>
${
  fix.patterns.length === 0
    ? html`<p class="muted">No promotion in this window.</p>`
    : html`<table><thead><tr><th>Pattern</th><th>Deployment</th><th class="num">Before</th><th class="num">After</th><th class="num">z</th><th class="num">p</th><th>Fixed</th></tr></thead>
<tbody>${fix.patterns.map(
        (p) =>
          html`<tr data-pattern="${p.patternId}"><td><a href="/ui/patterns/${encodeURIComponent(p.patternId)}">${p.label}</a></td><td><a href="/ui/deployments/${encodeURIComponent(p.deploymentId)}">${p.deploymentId}</a></td><td class="num">${p.before.failures}/${p.before.traces}</td><td class="num">${p.after.failures}/${p.after.traces}</td><td class="num">${figure(p.z)}</td><td class="num">${figure(p.pValue, 4)}</td><td>${p.untested ? `untested: ${p.untested}` : p.fixed ? "yes" : "no"}</td></tr>`,
      )}</tbody></table>`
}
<h2>Improvement per model version</h2>
<table><thead><tr><th>Model version</th><th class="num">Judged</th><th class="num">Failure rate</th><th>Trained from</th><th class="num">Its rate</th><th class="num">Change</th></tr></thead>
<tbody>${a.improvement.map(
    (v) =>
      html`<tr data-model="${v.modelVersion}"><td><a href="/ui/models/${encodeURIComponent(v.modelVersion)}">${v.name ?? v.modelVersion}</a></td><td class="num">${count(v.judged)}</td><td class="num" data-figure="failure-rate">${percent(v.failureRate)}</td><td>${v.parentId ?? "–"}</td><td class="num">${percent(v.parentFailureRate)}</td><td class="num">${v.change === null ? "–" : `${v.change > 0 ? "+" : ""}${(v.change * 100).toFixed(1)} pts`}</td></tr>`,
  )}</tbody></table>
<h2>Cost</h2>
<table><thead><tr><th>Model</th><th class="num">Prompt tokens</th><th class="num">Completion tokens</th><th class="num">Cost</th></tr></thead>
<tbody>${a.cost.models.map(
    (m) =>
      html`<tr><td>${m.model}</td><td class="num">${count(m.promptTokens)}</td><td class="num">${count(m.completionTokens)}</td><td class="num">${m.costUsd === null ? "no price" : usd(m.costUsd)}</td></tr>`,
  )}</tbody></table>
<p class="muted">Prices and the cost of a failure: <code>arc analytics settings</code>.</p>`;
}
