import type { FailurePattern } from "@arc/core";
import { html } from "hono/html";
import type { TrafficPoint } from "../../failures/live-failure-rates.ts";
import { lineChart, type Series } from "../charts.ts";
import type { DashboardApi } from "../dashboard-api.ts";
import { count, percent } from "../format.ts";
import { Labels } from "../labels.ts";
import type { Markup } from "../page-shell.ts";
import { type DeploymentsAnswer, deploymentLink } from "./deployments-page.ts";

/** What `GET /v1/traffic` answers. */
export interface TrafficAnswer {
  since: string;
  bucketSeconds: number;
  points: TrafficPoint[];
}

/**
 * Headline figures over traffic points: traces, judged, failed, the failures' share of all traces, and the failure
 * rate of the judged. That rate is null until some trace passed: where only failures are judged (no verifier or
 * judge passes the others), failures over judged would read 100% whatever the traffic.
 */
export function trafficTotals(points: TrafficPoint[]) {
  const traces = points.reduce((s, p) => s + p.traces, 0);
  const judged = points.reduce((s, p) => s + p.judged, 0);
  const failures = points.reduce((s, p) => s + p.failures, 0);
  return {
    traces,
    judged,
    failures,
    failureShare: traces > 0 ? failures / traces : null,
    failureRate: judged > failures ? failures / judged : null,
  };
}

/** One series per model version of `measure` over the buckets, x in hours before now (the bucket's middle). */
function seriesByVersion(
  answer: TrafficAnswer,
  hours: number,
  labels: Labels,
  measure: (p: TrafficPoint) => number | null,
): Series[] {
  const versions = [...new Set(answer.points.map((p) => p.modelVersion))];
  return versions.map((v) => ({
    name: labels.versionName(v),
    color: labels.versionColour(v),
    points: answer.points
      .filter((p) => p.modelVersion === v)
      .flatMap((p) => {
        const y = measure(p);
        return y === null ? [] : [{ x: hours - (p.t + answer.bucketSeconds / 2) / 3600, y }];
      }),
  }));
}

/** The hours before now the x axis labels, per window: every quarter hour, every 6 hours, every day. */
const windowTicks: Record<string, number[]> = {
  "1": [1, 0.75, 0.5, 0.25, 0],
  "24": [24, 18, 12, 6, 0],
  "168": [168, 144, 120, 96, 72, 48, 24, 0],
};

/** The windows the overview offers, in hours, and the label of each. */
export const overviewWindows: Record<string, string> = { "1": "1 hour", "24": "24 hours", "168": "7 days" };

/**
 * Overview: traffic and failure rate by model version over a window (`?hours=1|24|168`, default 24), the largest
 * patterns, the canary.
 */
export async function overviewPage(api: DashboardApi, hoursParam: string): Promise<Markup> {
  const hours = hoursParam in overviewWindows ? hoursParam : "24";
  const [traffic, patterns, deployments, labels] = await Promise.all([
    api.get<TrafficAnswer>(`/traffic?hours=${hours}&buckets=48`),
    api.get<{ data: FailurePattern[]; pending: number }>("/patterns?limit=5"),
    api.get<DeploymentsAnswer>("/deployments"),
    Labels.load(api),
  ]);
  const totals = trafficTotals(traffic.points);
  const active = deployments.active;
  return html`
<p>Window: ${Object.entries(overviewWindows).map(([h, label]) =>
    h === hours
      ? html`<strong aria-current="true">${label}</strong> `
      : html`<a href="/ui?hours=${h}">${label}</a> `,
  )}</p>
<section id="overview-live" data-live aria-label="The window's traffic">
<div class="cards">
<div class="card"><div class="label">Traces, last ${overviewWindows[hours]}</div><div class="value" data-figure="traces">${count(totals.traces)}</div></div>
<div class="card"><div class="label">Judged</div><div class="value" data-figure="judged">${count(totals.judged)}</div></div>
<div class="card"><div class="label">Failed</div><div class="value" data-figure="failures">${count(totals.failures)}</div><div class="label" data-figure="failure-share">${percent(totals.failureShare)} of traces</div></div>
<div class="card"><div class="label">Failure rate (judged)</div><div class="value" data-figure="failure-rate">${percent(totals.failureRate)}</div>${totals.failureRate === null && totals.failures > 0 ? html`<div class="label" data-figure="failure-rate-why">no trace passed a check yet: only failures are judged</div>` : ""}</div>
<div class="card"><div class="label">Waiting for detection</div><div class="value" data-figure="pending">${count(patterns.pending)}</div></div>
<div class="card"><div class="label">Canary</div><div class="value" data-figure="canary">${active ? html`${deploymentLink(active.id, percent(active.share))}` : "none"}</div></div>
</div>
<div class="charts">
${lineChart({
  title: "Traces per bucket, by model version",
  series: seriesByVersion(traffic, Number(hours), labels, (p) => p.traces),
  xLabel: "hours before now",
  xDomain: [Number(hours), 0],
  xTickValues: windowTicks[hours],
  yLabel: "traces",
  yMin: 0,
  empty: `No traces in the last ${overviewWindows[hours]}.`,
})}
${lineChart({
  title: "Failure rate of judged traces, by model version",
  series: seriesByVersion(traffic, Number(hours), labels, (p) =>
    totals.failureRate !== null && p.judged > 0 ? p.failures / p.judged : null,
  ),
  xLabel: "hours before now",
  xDomain: [Number(hours), 0],
  xTickValues: windowTicks[hours],
  yLabel: "failure rate",
  yMin: 0,
  empty:
    totals.judged > 0
      ? "No trace passed a check yet: the failure rate of judged traces shows once one has."
      : `No judged traces in the last ${overviewWindows[hours]}.`,
})}
</div>
</section>
<h2>Largest patterns</h2>
${
  patterns.data.length === 0
    ? html`<p class="muted">No failure patterns yet.</p>`
    : html`<table>
<thead><tr><th>Pattern</th><th class="num">Failures</th><th>Last seen</th></tr></thead>
<tbody>${patterns.data.map(
        (p) =>
          html`<tr><td><a href="/ui/patterns/${encodeURIComponent(p.id)}">${p.label}</a></td><td class="num">${count(p.count)}</td><td>${p.lastSeen.slice(0, 10)}</td></tr>`,
      )}</tbody>
</table>`
}`;
}
