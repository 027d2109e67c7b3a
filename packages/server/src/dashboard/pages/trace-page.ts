import type { ChatMessage, Feedback, Step, Trace, Verdict } from "@arc/core";
import { html } from "hono/html";
import type { DatasetInfo } from "../../failures/dataset-store.ts";
import type { StoredVerdict } from "../../failures/verdict-store.ts";
import type { Annotation } from "../../judges/annotation-store.ts";
import type { TenantRun } from "../../orchestrator/run-store.ts";
import { ApiAnswerError, type DashboardApi } from "../dashboard-api.ts";
import { count, when } from "../format.ts";
import { Labels } from "../labels.ts";
import type { Markup } from "../page-shell.ts";
import { annotationSection } from "./review-pages.ts";
import { duration } from "./traces-page.ts";

/** A value as text: strings as they are, anything else as compact JSON. */
function plain(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A message's content: text, and images drawn (data URLs and the server's own image URLs). */
function content(value: ChatMessage["content"]): Markup {
  if (value === null || value === undefined) return html``;
  if (typeof value === "string") return html`<div class="text">${value}</div>`;
  return html`${value.map((part) => {
    if (part.type === "text") return html`<div class="text">${plain(part.text)}</div>`;
    const url = (part as { image_url?: { url?: string } }).image_url?.url;
    if (part.type === "image_url" && url?.startsWith("data:image/"))
      return html`<img src="${url}" alt="an image the user sent">`;
    return html`<div class="muted">[${part.type}${url ? ` ${url.slice(0, 60)}` : ""}]</div>`;
  })}`;
}

/** Tool calls as a table: the tool, its arguments (as JSON when they parse) and the call's id on hover. */
function toolCalls(calls: { id?: string; function: { name: string; arguments: string } }[]): Markup {
  return html`<table class="tool-calls"><thead><tr><th>Tool call</th><th>Arguments</th></tr></thead><tbody>${calls.map(
    (call) =>
      html`<tr><td title="${call.id ?? ""}"><code>${call.function.name}</code></td><td><code>${call.function.arguments}</code></td></tr>`,
  )}</tbody></table>`;
}

/** One chat message: its role, content, tool calls, or the tool result it carries. */
function message(m: ChatMessage): Markup {
  const calls = (m as { tool_calls?: { id?: string; function: { name: string; arguments: string } }[] })
    .tool_calls;
  const callId = (m as { tool_call_id?: string }).tool_call_id;
  return html`<div class="message ${m.role}"><div class="role">${m.role}${callId ? html` <span class="muted" title="${callId}">result of a tool call</span>` : ""}</div>
${content(m.content)}${calls?.length ? toolCalls(calls) : ""}</div>`;
}

/**
 * The conversation as the model saw it and answered: the messages of the trace's last LLM step (which hold the
 * earlier turns), then that step's answer; a trace without LLM steps shows its input and output.
 */
function conversation(trace: Trace): Markup {
  const llm = trace.steps.filter((s) => s.kind === "llm" && s.llm);
  const last = llm.at(-1)?.llm;
  if (!last)
    return html`<div class="message user"><div class="role">input</div><div class="text">${plain(trace.input)}</div></div>
<div class="message assistant"><div class="role">output</div><div class="text">${plain(trace.output)}</div></div>`;
  const answer = last.output;
  return html`${last.messages.map(message)}
<div class="message assistant" data-answer><div class="role">assistant · answer</div>${answer?.content ? html`<div class="text">${answer.content}</div>` : ""}${answer?.toolCalls?.length ? toolCalls(answer.toolCalls) : ""}</div>`;
}

/** Steps in tree order (children after their parent), each with its depth. */
function stepTree(steps: Step[]): { step: Step; depth: number }[] {
  const ids = new Set(steps.map((s) => s.id));
  const children = new Map<string | undefined, Step[]>();
  for (const s of steps) {
    const parent = s.parentId && ids.has(s.parentId) ? s.parentId : undefined;
    children.set(parent, [...(children.get(parent) ?? []), s]);
  }
  const out: { step: Step; depth: number }[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const s of children.get(parent) ?? []) {
      out.push({ step: s, depth });
      walk(s.id, depth + 1);
    }
  };
  walk(undefined, 0);
  return out;
}

/** A step's duration in ms: its latency, else end minus start. */
function stepMs(s: Step): number | null {
  if (s.latencyMs !== undefined) return s.latencyMs;
  return s.endedAt ? Date.parse(s.endedAt) - Date.parse(s.startedAt) : null;
}

/** The span tree with a timeline bar per step, and tokens, latency and model version per step. */
function spans(trace: Trace, labels: Labels): Markup {
  if (trace.steps.length === 0) return html`<p class="muted">No steps recorded.</p>`;
  const start = Math.min(...trace.steps.map((s) => Date.parse(s.startedAt)));
  const end = Math.max(...trace.steps.map((s) => Date.parse(s.startedAt) + (stepMs(s) ?? 0)), start + 1);
  const W = 240;
  const x = (t: number) => ((t - start) / (end - start)) * W;
  return html`<table class="spans"><thead><tr><th>Step</th><th>Kind</th><th>Timeline</th><th class="num">Latency</th><th class="num">Tokens in / out</th><th>Model version</th><th>Input → output</th></tr></thead>
<tbody>${stepTree(trace.steps).map(({ step: s, depth }) => {
    const ms = stepMs(s) ?? 0;
    const left = x(Date.parse(s.startedAt));
    const width = Math.max(2, x(Date.parse(s.startedAt) + ms) - left);
    const usage = s.llm?.usage;
    const io =
      s.kind === "llm"
        ? plain(s.llm?.output?.content ?? s.llm?.output?.toolCalls?.map((c) => c.function.name).join(", "))
        : `${plain(s.input)} → ${plain(s.output)}`;
    return html`<tr data-step="${s.id}">
<td title="${s.id}">${"· ".repeat(depth)}${s.name ?? s.llm?.modelServed ?? s.kind}</td>
<td>${s.kind}${s.error ? html` <span class="status failed" title="${s.error.message}">error</span>` : ""}</td>
<td><svg class="swatch" width="${W}" height="10" aria-label="from ${Math.round(left)} to ${Math.round(left + width)} of ${W}"><rect x="${left.toFixed(1)}" width="${width.toFixed(1)}" height="10" fill="${s.error ? "#f1948a" : s.kind === "llm" ? "#7dcea0" : "#85c1e9"}"/></svg></td>
<td class="num">${duration(ms)}</td>
<td class="num">${usage ? `${count(usage.promptTokens ?? 0)} / ${count(usage.completionTokens ?? 0)}` : "–"}</td>
<td>${s.llm ? labels.version(s.llm.modelVersion ?? s.llm.modelServed) : "–"}</td>
<td><code>${io.slice(0, 160)}</code></td>
</tr>`;
  })}</tbody></table>`;
}

/** The verdict and every detector's finding with its evidence. */
function verdictSection(verdict: StoredVerdict | null, labels: Labels): Markup {
  if (!verdict) return html`<p class="muted">Not judged yet.</p>`;
  return html`<p><span class="status ${verdict.status}" data-figure="verdict">${verdict.status}</span>${verdict.failureClass ? ` ${verdict.failureClass}` : ""}${verdict.severity ? ` · severity ${verdict.severity}` : ""} · pattern ${labels.pattern(verdict.patternId)} · model ${labels.version(verdict.modelVersion)} · judged ${when(verdict.judgedAt)} (revision ${verdict.revision})</p>
<table><thead><tr><th>Detector</th><th>Verdict</th><th>Evidence</th><th>Expected</th><th>Actual</th></tr></thead>
<tbody>${verdict.judgement.verdicts.map(
    (v: Verdict) =>
      html`<tr><td>${v.detectorId}</td><td><span class="status ${v.status}">${v.status}</span>${v.class ? ` ${v.class}` : ""}</td><td>${v.evidence.message}${v.evidence.snippet ? html`<br><code>${v.evidence.snippet}</code>` : ""}</td><td><code>${plain(v.evidence.expected)}</code></td><td><code>${plain(v.evidence.actual)}</code></td></tr>`,
  )}</tbody></table>`;
}

function feedbackSection(feedback: Feedback[]): Markup {
  if (feedback.length === 0) return html`<p class="muted">No feedback yet.</p>`;
  return html`<table class="feedback"><thead><tr><th>When</th><th>Step</th><th>Label</th><th class="num">Score</th><th>Correction</th><th>Comment</th></tr></thead>
<tbody>${feedback.map(
    (f) =>
      html`<tr><td>${when(f.createdAt)}</td><td>${f.stepId ?? "whole trace"}</td><td>${f.label ?? "–"}</td><td class="num">${f.score ?? "–"}</td><td>${f.correction ?? ""}</td><td>${f.comment ?? ""}</td></tr>`,
  )}</tbody></table>`;
}

/** The review form: a label, a score, a correction of the answer and a comment, on the trace or one step. */
function reviewForm(trace: Trace, notice?: string, refused = false): Markup {
  return html`${notice ? (refused ? html`<p role="alert" class="error">${notice}</p>` : html`<p role="status">${notice}</p>`) : ""}<form class="review" method="post" action="/ui/traces/${encodeURIComponent(trace.id)}/feedback">
<label for="review-step">On</label>
<select id="review-step" name="stepId"><option value="">the whole trace</option>${trace.steps.map(
    (s) => html`<option value="${s.id}">${s.name ?? s.kind} (${s.id})</option>`,
  )}</select>
<label for="review-label">Label</label>
<input id="review-label" name="label" type="text" placeholder="e.g. wrong_argument, good">
<label for="review-score">Score (0 bad to 1 good)</label>
<input id="review-score" name="score" type="text" inputmode="decimal">
<label for="review-correction">Correction: what the answer should have been</label>
<textarea id="review-correction" name="correction"></textarea>
<label for="review-comment">Comment</label>
<input id="review-comment" name="comment" type="text">
<p><button class="action" type="submit">Save review</button></p>
</form>`;
}

/** What a trace page says after an action, and the review queue it was opened from. */
export interface TracePageOptions {
  /** What the last action did, and which form it came from. */
  notice?: string;
  about?: "review" | "label";
  /** The action was refused (the notice says why). */
  refused?: boolean;
  /** The review queue the trace was opened from. */
  queue?: string;
  /** The next trace waiting in that queue, once this one is labelled. */
  next?: string;
}

/**
 * One trace as a person reads it: the conversation rendered, the span tree with a timeline and per-step figures,
 * the verdict with its evidence, the feedback with a review form, and the pattern, datasets and runs it fed.
 * and its labels (the judges' gold set) with the form that adds one.
 */
export async function tracePage(
  api: DashboardApi,
  id: string,
  options: TracePageOptions = {},
): Promise<Markup> {
  const { notice, refused = false, queue } = options;
  const [trace, verdict, labels, datasets, runs, annotations] = await Promise.all([
    api.get<Trace & { feedback: Feedback[] }>(`/traces/${encodeURIComponent(id)}`),
    api.get<StoredVerdict>(`/verdicts?traceId=${encodeURIComponent(id)}`).catch((error) => {
      if (error instanceof ApiAnswerError && error.status === 404) return null;
      throw error;
    }),
    Labels.load(api),
    api.get<{ data: DatasetInfo[] }>("/datasets"),
    api.get<{ data: TenantRun[] }>("/runs"),
    api.get<{ data: Annotation[] }>(`/annotations?traceId=${encodeURIComponent(id)}`),
  ]);
  const fed = datasets.data.filter((d) => d.sourceTraceIds.includes(trace.id));
  const fedRuns = runs.data.filter((r) => r.datasets.some((d) => fed.some((f) => f.id === d.id)));
  const tokens = trace.steps.reduce((n, s) => n + (s.llm?.usage?.totalTokens ?? 0), 0);
  const total = trace.endedAt !== undefined ? Date.parse(trace.endedAt) - Date.parse(trace.startedAt) : null;
  return html`<table class="facts"><tbody>
<tr><th>Trace id</th><td><code>${trace.id}</code>${trace.name ? ` · ${trace.name}` : ""}</td><th>Started</th><td>${when(trace.startedAt)}</td></tr>
<tr><th>User</th><td>${trace.userId ? html`<a href="/ui/users/${encodeURIComponent(trace.userId)}">${trace.userId}</a>` : "–"}</td><th>Session</th><td>${trace.sessionId ? html`<a href="/ui/sessions/${encodeURIComponent(trace.sessionId)}">${trace.sessionId}</a>` : "–"}</td></tr>
<tr><th>Task family</th><td>${trace.env ?? "–"}</td><th>Status</th><td>${trace.status}</td></tr>
<tr><th>Latency</th><td data-figure="latency">${duration(total)}</td><th>Tokens</th><td data-figure="tokens">${count(tokens)}</td></tr>
<tr><th>Tags</th><td>${trace.tags?.length ? trace.tags.join(", ") : "–"}</td><th>Fed</th><td>${fed.length ? fed.map((d) => html`<a href="/ui/datasets/${encodeURIComponent(d.id)}" title="${d.id}">${d.kind} dataset</a> `) : "no dataset"}${fedRuns.map((r) => html` · <a href="/ui/runs/${encodeURIComponent(r.id)}">run ${r.id}</a>`)}</td></tr>
</tbody></table>
<h2>Conversation</h2>
<section aria-label="Conversation" id="conversation">${conversation(trace)}</section>
<h2>Steps</h2>
${spans(trace, labels)}
<h2>Verdict</h2>
${verdictSection(verdict, labels)}
<h2>Feedback</h2>
${feedbackSection(trace.feedback)}
<h2>Review</h2>
${reviewForm(trace, options.about === "review" ? notice : undefined, refused)}
<h2>Label</h2>
${options.about === "label" && notice ? (refused ? html`<p role="alert" class="error">${notice}</p>` : html`<p role="status">${notice}</p>`) : ""}${options.next ? html`<p><a href="${options.next}" rel="next">Next in the queue →</a></p>` : ""}
${annotationSection(trace.id, annotations.data, queue)}`;
}
