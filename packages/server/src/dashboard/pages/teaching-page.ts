import type { NdrDecision } from "@arc/core";
import { html } from "hono/html";
import type { DashboardApi } from "../dashboard-api.ts";
import { count, percent } from "../format.ts";
import type { Markup } from "../page-shell.ts";

/** What `GET /v1/teaching` answers. */
interface TeachingAnswer {
  config: { mode: string; teacher: string; patterns?: string[] } | null;
  patterns: { patternId: string; teaching: boolean; decision: NdrDecision | null; switchedOff?: unknown }[];
}

/** Teaching: the tenant's teacher, and each pattern's live NDR with its interval and the monitor's decision. */
export async function teachingPage(api: DashboardApi): Promise<Markup> {
  const { config, patterns } = await api.get<TeachingAnswer>("/teaching");
  return html`<p>${
    config
      ? html`Mode <strong>${config.mode}</strong>, teacher <a href="/ui/models/${encodeURIComponent(config.teacher)}">${config.teacher}</a>, ${config.patterns ? html`for ${count(config.patterns.length)} patterns` : "for all traffic"}.`
      : html`<span class="muted">No teacher is configured (<code>arc teaching set</code>).</span>`
  }</p>
<section id="teaching-live" data-live aria-label="Live NDR">
${
  patterns.length === 0
    ? html`<p class="muted">No pattern is taught yet.</p>`
    : html`<table>
<thead><tr><th>Pattern</th><th>Teaching</th><th class="num">Samples</th><th class="num">Degraded</th><th class="num">NDR</th><th class="num">95% interval</th><th>Why</th></tr></thead>
<tbody>${patterns.map((p) => {
        const d = p.decision;
        return html`<tr data-pattern="${p.patternId}"><td>${p.patternId.startsWith("pat_") ? html`<a href="/ui/patterns/${encodeURIComponent(p.patternId)}">${p.patternId}</a>` : p.patternId}</td><td>${p.teaching ? "on" : "switched off"}</td><td class="num">${d ? count(d.samples) : "–"}</td><td class="num">${d ? count(d.degradations) : "–"}</td><td class="num" data-figure="ndr">${percent(d?.ndr)}</td><td class="num">${d ? `${percent(d.lower)} – ${percent(d.upper)}` : "–"}</td><td>${d?.reason ?? ""}</td></tr>`;
      })}</tbody>
</table>`
}
</section>`;
}
