import { html, raw } from "hono/html";
import type { Deployment } from "../../deploy/deployment-store.ts";
import type { AuditEntry } from "../../store/audit-log.ts";
import type { ModelVersion } from "../../store/model-registry.ts";
import type { DashboardApi } from "../dashboard-api.ts";
import { dataTable } from "../data-table.ts";
import { when } from "../format.ts";
import { Labels } from "../labels.ts";
import { type LineageEdge, type LineageNode, lineageGraphSvg } from "../lineage-graph.ts";
import type { Markup } from "../page-shell.ts";
import type { DeploymentsAnswer } from "./deployments-page.ts";

const modelLink = (id: string, text = id) => html`<a href="/ui/models/${encodeURIComponent(id)}">${text}</a>`;

/**
 * The nodes and edges of the tenant's lineage: from each model's recorded lineage, parent and deployments, each
 * node named for a person (a pattern's label, a model's name), its id on hover.
 */
export function lineageOf(
  models: ModelVersion[],
  deployments: Deployment[],
  patternName: (id: string) => string = (id) => id,
) {
  const nodes = new Map<string, LineageNode>();
  const edges: LineageEdge[] = [];
  const add = (node: LineageNode) => {
    if (!nodes.has(node.id)) nodes.set(node.id, node);
  };
  for (const m of models) {
    add({ id: m.id, kind: "model", label: `${m.name} (${m.status})`, href: `/ui/models/${m.id}` });
    if (m.parentId) edges.push({ from: m.parentId, to: m.id });
    const { runId, datasets = [], patterns = [] } = m.lineage;
    for (const p of patterns)
      add({ id: p, kind: "pattern", label: patternName(p), href: `/ui/patterns/${p}` });
    for (const d of datasets) {
      add({ id: d.id, kind: "dataset", label: `${d.kind} dataset`, href: `/ui/datasets/${d.id}` });
      for (const p of patterns) edges.push({ from: p, to: d.id });
    }
    if (runId) {
      add({ id: runId, kind: "run", label: `run of ${m.name}`, href: `/ui/runs/${runId}` });
      for (const d of datasets) edges.push({ from: d.id, to: runId });
      edges.push({ from: runId, to: m.id });
    } else for (const d of datasets) edges.push({ from: d.id, to: m.id });
  }
  for (const d of deployments) {
    const candidate = models.find((m) => m.id === d.candidateId)?.name ?? d.candidateId;
    add({
      id: d.id,
      kind: "deployment",
      label: `${candidate} (${d.status.replaceAll("_", " ")})`,
      href: `/ui/deployments/${d.id}`,
    });
    edges.push({ from: d.candidateId, to: d.id });
  }
  return { nodes: [...nodes.values()], edges };
}

/** Models: the lineage graph from traces to deployment, and every model version. */
export async function modelsPage(api: DashboardApi): Promise<Markup> {
  const [{ data }, deployments, labels] = await Promise.all([
    api.get<{ data: ModelVersion[] }>("/model-versions"),
    api.get<DeploymentsAnswer>("/deployments"),
    Labels.load(api),
  ]);
  if (data.length === 0) return html`<p class="muted">No model versions yet.</p>`;
  const graph = lineageOf(data, deployments.recent, (id) => labels.patternName(id));
  return html`<h2>Lineage</h2>
<figure>${raw(lineageGraphSvg(graph.nodes, graph.edges))}</figure>
<h2>Model versions</h2>
<table>
<thead><tr><th>Model version</th><th>Name</th><th>Status</th><th>Trained from</th><th>Run</th><th class="num">Source traces</th><th>Updated</th></tr></thead>
<tbody>${data.map(
    (m) =>
      html`<tr data-model="${m.id}"><td>${modelLink(m.id)}</td><td>${m.name}</td><td><span class="status ${m.status}" data-figure="status">${m.status}</span></td><td>${m.parentId ? modelLink(m.parentId) : "–"}</td><td>${m.lineage.runId ? html`<a href="/ui/runs/${encodeURIComponent(m.lineage.runId)}">${m.lineage.runId}</a>` : "–"}</td><td class="num">${m.lineage.sourceTraceCount ?? "–"}</td><td>${when(m.updatedAt)}</td></tr>`,
  )}</tbody>
</table>`;
}

/** One model version: where it is served from, its lineage, validations and audit trail. */
export async function modelPage(api: DashboardApi, id: string): Promise<Markup> {
  const {
    model: m,
    validations,
    audit,
  } = await api.get<{
    model: ModelVersion;
    validations: Record<string, unknown>[];
    audit: AuditEntry[];
  }>(`/model-versions/${encodeURIComponent(id)}`);
  return html`<p><strong>${m.name}</strong> · <span class="status ${m.status}">${m.status}</span> ·
${m.upstream ? html`served by an upstream` : html`a checkpoint`} · trained from ${m.parentId ? modelLink(m.parentId) : "–"}</p>
<h2>Lineage</h2>${dataTable(m.lineage)}
<h2>Validations</h2>
${validations.length ? dataTable(validations) : html`<p class="muted">None yet.</p>`}
<h2>Audit trail</h2>
<table><thead><tr><th>When</th><th>Actor</th><th>Action</th><th>From</th><th>To</th></tr></thead>
<tbody>${audit.map(
    (a) =>
      html`<tr><td>${when(a.at)}</td><td>${a.actor}</td><td>${a.action}</td><td>${a.fromState ?? "–"}</td><td>${a.toState ?? "–"}</td></tr>`,
  )}</tbody></table>`;
}
