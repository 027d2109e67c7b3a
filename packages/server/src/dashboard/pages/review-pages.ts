import { html } from "hono/html";
import type { Annotation, ReviewItem } from "../../judges/annotation-store.ts";
import type { DashboardApi } from "../dashboard-api.ts";
import { count, when } from "../format.ts";
import type { Markup } from "../page-shell.ts";

/** Review: every review queue with the traces waiting in it for a person's label. */
export async function reviewQueuesPage(api: DashboardApi): Promise<Markup> {
  const { data } = await api.get<{ data: { queue: string; pending: number }[] }>("/review-queues");
  if (data.length === 0)
    return html`<p class="muted">No review queues yet: <code>POST /v1/review-queues/&lt;queue&gt;/items</code> or <code>arc annotations</code> fills one.</p>`;
  return html`<table><thead><tr><th>Queue</th><th class="num">Waiting</th></tr></thead>
<tbody>${data.map(
    (q) =>
      html`<tr data-queue="${q.queue}"><td><a href="/ui/reviews/${encodeURIComponent(q.queue)}">${q.queue}</a></td><td class="num" data-figure="pending">${count(q.pending)}</td></tr>`,
  )}</tbody></table>`;
}

/** One review queue: the traces nobody labelled since they joined it, oldest first, each opened for its label. */
export async function reviewQueuePage(api: DashboardApi, queue: string): Promise<Markup> {
  const { data } = await api.get<{ data: ReviewItem[] }>(
    `/review-queues/${encodeURIComponent(queue)}?limit=200`,
  );
  if (data.length === 0) return html`<p class="muted">Nothing waits in this queue.</p>`;
  return html`<p>${count(data.length)} traces wait for a label; <a href="${traceInQueue(data[0].traceId, queue)}">start with the oldest</a>.</p>
<table><thead><tr><th>Trace</th><th>Why</th><th>Added</th></tr></thead>
<tbody>${data.map(
    (item) =>
      html`<tr data-trace="${item.traceId}"><td><a href="${traceInQueue(item.traceId, queue)}">${item.traceId}</a></td><td>${item.reason}</td><td>${when(item.addedAt)}</td></tr>`,
  )}</tbody></table>`;
}

/** A trace's page opened from a review queue (its label form then leads on to the next trace waiting). */
export function traceInQueue(traceId: string, queue: string): string {
  return `/ui/traces/${encodeURIComponent(traceId)}?queue=${encodeURIComponent(queue)}`;
}

/** A trace's labels, and the form that adds one: pass or fail, a failure class, a rationale (the judges' gold set). */
export function annotationSection(traceId: string, annotations: Annotation[], queue?: string): Markup {
  const action = `/ui/traces/${encodeURIComponent(traceId)}/annotations${queue ? `?queue=${encodeURIComponent(queue)}` : ""}`;
  return html`${
    annotations.length === 0
      ? html`<p class="muted">No label yet.</p>`
      : html`<table class="annotations"><thead><tr><th>When</th><th>By</th><th>Step</th><th>Label</th><th>Class</th><th>Rationale</th></tr></thead>
<tbody>${annotations.map(
          (a) =>
            html`<tr><td>${when(a.createdAt)}</td><td>${a.author}</td><td>${a.stepId ?? "whole trace"}</td><td><span class="status ${a.label === "pass" ? "passed" : "failed"}">${a.label}</span></td><td>${a.class ?? "–"}</td><td>${a.rationale}</td></tr>`,
        )}</tbody></table>`
  }
<form class="review" method="post" action="${action}">
<fieldset><legend>Label</legend>
<label><input type="radio" name="label" value="pass" required> pass</label>
<label><input type="radio" name="label" value="fail"> fail</label></fieldset>
<label for="annotation-class">Failure class (with fail)</label>
<input id="annotation-class" name="class" type="text" placeholder="e.g. wrong_argument">
<label for="annotation-rationale">Rationale</label>
<input id="annotation-rationale" name="rationale" type="text" required>
<p><button class="action" type="submit">Save label</button></p>
</form>`;
}
