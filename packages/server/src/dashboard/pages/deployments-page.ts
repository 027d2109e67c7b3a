import { html } from "hono/html";
import type { Deployment } from "../../deploy/deployment-store.ts";
import { ApiAnswerError, type DashboardApi } from "../dashboard-api.ts";
import { dataTable } from "../data-table.ts";
import { count, percent, when } from "../format.ts";
import type { Markup } from "../page-shell.ts";

/** What `GET /v1/deployments` answers. */
export interface DeploymentsAnswer {
  active: (Deployment & { failureRates: ArmRate[] }) | null;
  recent: Deployment[];
}

/** Judged traffic of one arm in one stage of a canary. */
interface ArmRate {
  arm: string;
  stage: number;
  n: number;
  failures: number;
}

/** An audit entry as the API lists it. */
interface AuditEntry {
  at: string;
  actor: string;
  action: string;
  fromState: string | null;
  toState: string | null;
  evidence: Record<string, unknown>;
}

/** A link to a deployment's page. */
export function deploymentLink(id: string, text: string): Markup {
  return html`<a href="/ui/deployments/${encodeURIComponent(id)}">${text}</a>`;
}

const modelLink = (id: string) => html`<a href="/ui/models/${encodeURIComponent(id)}">${id}</a>`;

/** Deployments: the running canary and the recent ones. */
export async function deploymentsPage(api: DashboardApi): Promise<Markup> {
  const { active, recent } = await api.get<DeploymentsAnswer>("/deployments");
  return html`
<section id="deployments-live" data-live aria-label="Running canary">
<h2>Running canary</h2>
${
  active
    ? html`<p>${deploymentLink(active.id, active.id)}: ${modelLink(active.candidateId)} takes
<strong data-figure="canary-share">${percent(active.share)}</strong> of traffic (stage ${active.stage + 1} of ${active.policy.ramp.length}) against ${modelLink(active.controlId)}.</p>
${armTable(active.failureRates)}`
    : html`<p class="muted">No canary is running.</p>`
}
</section>
<h2>Recent deployments</h2>
${
  recent.length === 0
    ? html`<p class="muted">No deployments yet.</p>`
    : html`<table>
<thead><tr><th>Deployment</th><th>Candidate</th><th>Control</th><th>Status</th><th class="num">Share</th><th>Updated</th></tr></thead>
<tbody>${recent.map(
        (d) =>
          html`<tr><td>${deploymentLink(d.id, d.id)}</td><td>${modelLink(d.candidateId)}</td><td>${modelLink(d.controlId)}</td><td><span class="status ${d.status}">${d.status}</span></td><td class="num">${percent(d.share)}</td><td>${when(d.updatedAt)}</td></tr>`,
      )}</tbody>
</table>`
}`;
}

/** Failure rates per arm and stage. */
function armTable(rates: ArmRate[]): Markup {
  if (rates.length === 0) return html`<p class="muted">No judged traffic on this deployment yet.</p>`;
  return html`<table aria-label="Live evidence">
<thead><tr><th>Stage</th><th>Arm</th><th class="num">Judged</th><th class="num">Failed</th><th class="num">Failure rate</th></tr></thead>
<tbody>${rates.map(
    (r) =>
      html`<tr><td>${r.stage + 1}</td><td>${r.arm}</td><td class="num">${count(r.n)}</td><td class="num">${count(r.failures)}</td><td class="num">${percent(r.n > 0 ? r.failures / r.n : null)}</td></tr>`,
  )}</tbody>
</table>`;
}

/** The deployer's last step: its action and reason in words, its evidence folded away. */
function gateDecision(step: Record<string, unknown>): Markup {
  const { action, reason, ...rest } = step;
  return html`<p><strong data-figure="gate-action">${String(action ?? "")}</strong>: ${String(reason ?? "")}</p>
<details><summary>Evidence</summary>${dataTable(rest)}</details>`;
}

/**
 * One deployment: its state, live evidence per arm and stage, the gate's last decision, its audit trail, and the
 * actions only while it is a running canary. `notice` says what an action did; `refused` marks it as a refusal.
 */
export async function deploymentPage(
  api: DashboardApi,
  id: string,
  notice?: string,
  refused = false,
): Promise<Markup> {
  const {
    deployment: d,
    failureRates,
    audit,
  } = await api.get<{
    deployment: Deployment;
    failureRates: ArmRate[];
    audit: AuditEntry[];
  }>(`/deployments/${encodeURIComponent(id)}`);
  const path = `/ui/deployments/${encodeURIComponent(d.id)}`;
  return html`
${notice ? (refused ? html`<p role="alert" class="error">${notice}</p>` : html`<p role="status" class="card">${notice}</p>`) : ""}
<section id="deployment-live" data-live aria-label="Deployment state">
<p>Status <span class="status ${d.status}" data-figure="deployment-status">${d.status}</span>:
${modelLink(d.candidateId)} at <strong data-figure="canary-share">${percent(d.share)}</strong> of traffic against
${modelLink(d.controlId)}; stage ${d.stage + 1} of ${d.policy.ramp.length} (ramp ${d.policy.ramp.map((s) => percent(s)).join(" → ")}).</p>
${armTable(failureRates)}
<h2>The gate's last decision</h2>
${d.lastStep ? gateDecision(d.lastStep) : html`<p class="muted">None yet.</p>`}
</section>
${
  d.status === "canary"
    ? html`<h2>Actions</h2>
<p><a class="action" href="${path}/promote">Promote…</a> <a class="action danger" href="${path}/rollback">Roll back…</a></p>`
    : ""
}
<h2>Audit trail</h2>
<table>
<thead><tr><th>When</th><th>Actor</th><th>Action</th><th>From</th><th>To</th></tr></thead>
<tbody>${audit.map(
    (a) =>
      html`<tr><td>${when(a.at)}</td><td>${a.actor}</td><td>${a.action}</td><td>${a.fromState ?? "–"}</td><td>${a.toState ?? "–"}</td></tr>`,
  )}</tbody>
</table>`;
}

/**
 * The confirmation step of a promote or rollback: what it will do, a reason, and the button that does it. Only a
 * running canary can be promoted or rolled back; for any other deployment this is a 409 page that says so.
 */
export async function confirmActionPage(
  api: DashboardApi,
  id: string,
  action: "promote" | "rollback",
): Promise<Markup> {
  const { deployment: d } = await api.get<{ deployment: Deployment }>(
    `/deployments/${encodeURIComponent(id)}`,
  );
  if (d.status !== "canary")
    throw new ApiAnswerError(
      409,
      `Deployment ${d.id} is ${d.status.replaceAll("_", " ")}: only a running canary can be ${action === "promote" ? "promoted" : "rolled back"}.`,
    );
  const effect =
    action === "promote"
      ? html`All traffic goes to ${modelLink(d.candidateId)}, which becomes the production model.`
      : html`All traffic goes back to ${modelLink(d.controlId)}; ${modelLink(d.candidateId)} is marked rolled back.`;
  return html`<p>${effect} The action is written to the audit log with your key as its actor.</p>
<form method="post" action="/ui/deployments/${encodeURIComponent(d.id)}/${action}">
<label for="reason">Reason (optional)</label>
<input id="reason" name="reason" type="text" maxlength="1000">
<p><button class="action${action === "rollback" ? " danger" : ""}" type="submit">Confirm ${action === "promote" ? "promotion" : "rollback"}</button>
<a href="/ui/deployments/${encodeURIComponent(d.id)}">Cancel</a></p>
</form>`;
}
