import type { Trace } from "@arc/core";
import { checkChatRequest } from "@arc/engine";
import type { Counter } from "prom-client";
import type { Database } from "../store/database.ts";
import { type CompletionSummary, SseAccumulator, summarizeCompletion } from "./completion-summary.ts";
import { type GatewayCall, gatewayTrace } from "./gateway-trace.ts";
import { isWholeBody, jsonAnswer, type ModelAnswer, relayStream } from "./model-answer.ts";
import type { ModelPool } from "./model-pool.ts";
import { renameModelInText, StreamModelRename } from "./model-rename.ts";
import { openAiError } from "./openai-error.ts";
import { type RouteChoice, RoutingTable } from "./routing-table.ts";
import type { RunTimeTeacher } from "./run-time-teacher.ts";
import { TraceRecorder, type TraceRecorderOptions } from "./trace-recorder.ts";

/** What the gateway needs; the model pool is shared with the validator. */
export interface ChatGatewayDeps {
  db: Database;
  pool: ModelPool;
  routing?: RoutingTable;
  recorder?: TraceRecorder;
  recorderOptions?: TraceRecorderOptions;
  /** Run-time teaching: answers a tenant's (or a pattern's) non-streamed requests under its teacher. */
  teaching?: RunTimeTeacher;
  /** Counts each call's tokens by tenant, model and kind (`arc_gateway_tokens_total` on `/metrics`). */
  tokens?: Counter<"tenant" | "model" | "kind">;
}

/** The model name that follows the tenant's route (production, or the canary for its share). */
const ROUTED_MODEL = "arc";

/** OpenAI's 404 for a model name the tenant does not serve. */
function modelNotFound(name: string): ModelAnswer {
  return openAiError(
    404,
    `The model \`${name}\` does not exist or you do not have access to it.`,
    "invalid_request_error",
    "model_not_found",
  );
}

/** Request facts beyond the body: who is calling, for sticky routing and the trace. */
export interface ChatCallContext {
  /** `x-arc-session`: a conversation id (sticky key first choice). */
  sessionId?: string;
  /** `x-arc-user`, else the body's `user` field (sticky key second choice). */
  userId?: string;
  /** `x-arc-env`: the task environment, so the trace can be verified. */
  env?: string;
  /** `x-arc-pattern`: the failure pattern the client says the request belongs to (run-time teaching). */
  pattern?: string;
  /**
   * `x-arc-trace-id` / `x-arc-step-id` / `x-arc-parent-step-id`, sent by `@arc/sdk` when its client calls this
   * gateway: the call is recorded as that step of that trace (merged with the SDK's copy) instead of a trace of its own.
   */
  correlation?: GatewayCall["correlation"];
  signal?: AbortSignal;
}

/** The headers that fill a trace's fields, each as long as `POST /v1/traces` allows that field. */
const HEADER_LIMITS: [header: string, field: "sessionId" | "userId" | "env", max: number][] = [
  ["x-arc-session", "sessionId", 256],
  ["x-arc-user", "userId", 256],
  ["x-arc-env", "env", 128],
];

const DROPPED_HEADERS = new Set([
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "connection",
  "keep-alive",
]);

const utf8 = new TextDecoder();

/** A whole body's text. */
function textOf(body: string | Uint8Array): string {
  return typeof body === "string" ? body : utf8.decode(body);
}

/** A whole answer parsed for its trace: null for a 2xx that is not JSON, an error naming the status for another. */
function parseAnswer(body: string | Uint8Array, ok: boolean, status: number): unknown {
  try {
    return JSON.parse(textOf(body));
  } catch {
    return ok ? null : { error: { message: `HTTP ${status} with a non-JSON body` } };
  }
}

/**
 * Whether run-time teaching may answer a request: the teaching protocol returns one plain-text choice, so a request
 * offering tools or functions (the client expects tool calls) or asking for several choices (`n` > 1) goes to the
 * model untaught rather than getting an answer of another shape.
 */
function teachable(request: Record<string, unknown>): boolean {
  const offers = (k: string) => Array.isArray(request[k]) && (request[k] as unknown[]).length > 0;
  if (offers("tools") || offers("functions")) return false;
  return request.n === undefined || request.n === null || request.n === 1;
}

/** Records a call's trace with the status it ended with and what its answer held. */
type Finish = (status: number, summary: CompletionSummary, endedAt?: Date) => void;

/** OpenAI's 400 for a body that is not a chat completion request, or a header longer than its trace field; else null. */
function refusalOf(body: unknown, context: ChatCallContext): ModelAnswer | null {
  if (!body || typeof body !== "object" || Array.isArray(body)) {
    return openAiError(400, "expected a JSON object body", "invalid_request_error", "invalid_body");
  }
  const problem = checkChatRequest(body as Record<string, unknown>);
  if (problem) return openAiError(400, problem.message, "invalid_request_error", problem.code, problem.param);
  for (const [header, field, max] of HEADER_LIMITS) {
    const length = context[field]?.length ?? 0;
    if (length > max) {
      return openAiError(
        400,
        `${header}: expected at most ${max} characters, got ${length}`,
        "invalid_request_error",
        "invalid_value",
        header,
      );
    }
  }
  return null;
}

/**
 * The OpenAI-compatible gateway of every tenant: routes each chat completion to the tenant's deployed model versions
 * (sticky per conversation or user during a canary), forwards the answer — or the model's error — untouched, and
 * records the call as a trace off the request path.
 */
export class ChatGateway {
  readonly routing: RoutingTable;
  readonly recorder: TraceRecorder;
  /** Settles when the latest answer's trace is queued; earlier ones are queued before it (see `afterResponse`). */
  private lastRecorded: Promise<void> = Promise.resolve();

  constructor(private readonly deps: ChatGatewayDeps) {
    this.routing = deps.routing ?? new RoutingTable(deps.db);
    this.recorder = deps.recorder ?? new TraceRecorder(deps.db, deps.recorderOptions);
  }

  /** `GET /v1/models`: the tenant's deployed versions, plus `arc`, the name that follows the tenant's route. */
  async models(tenantId: string): Promise<ModelAnswer> {
    return jsonAnswer(200, { object: "list", data: await this.modelList(tenantId) });
  }

  /** `GET /v1/models/{id}`: one of `models`, else OpenAI's 404 `model_not_found`. */
  async model(tenantId: string, id: string): Promise<ModelAnswer> {
    const found = (await this.modelList(tenantId)).find((m) => m.id === id);
    return found ? jsonAnswer(200, found) : modelNotFound(id);
  }

  private async modelList(tenantId: string) {
    const route = await this.routing.route(tenantId);
    if (!route) return [];
    const created = (iso: string) => Math.floor(new Date(iso).getTime() / 1000);
    const model = (id: string, at: string) => ({
      id,
      object: "model",
      created: created(at),
      owned_by: tenantId,
    });
    return [
      model(ROUTED_MODEL, route.control.createdAt),
      ...[route.control, route.canary?.model]
        .filter((m) => m !== undefined)
        .map((m) => model(m.name, m.createdAt)),
    ];
  }

  /**
   * `POST /v1/chat/completions` for a tenant, body already parsed: refused when malformed, routed, taught where the
   * tenant's teaching answers it, else forwarded to the chosen model version and relayed back.
   */
  async chat(tenantId: string, body: unknown, context: ChatCallContext = {}): Promise<ModelAnswer> {
    const refused = refusalOf(body, context);
    if (refused) return refused;
    const request = body as Record<string, unknown>;
    const routed = await this.choose(tenantId, request, context);
    if ("answer" in routed) return routed.answer;
    const { choice, userId } = routed;
    const taught = teachable(request)
      ? await this.deps.teaching?.teach(tenantId, request, choice, { ...context, userId })
      : null;
    if (taught) {
      this.record(tenantId, taught.trace);
      return taught.answer;
    }
    const startedAt = new Date();
    const finish: Finish = (status, summary, endedAt = new Date()) =>
      this.record(
        tenantId,
        gatewayTrace({
          body: request,
          choice,
          startedAt,
          endedAt,
          status,
          summary,
          userId,
          sessionId: context.sessionId,
          env: context.env,
          correlation: context.correlation,
        }),
      );
    let upstream: ModelAnswer;
    let renameTo: string | undefined;
    try {
      const backend = await this.deps.pool.backend(choice.model);
      renameTo = backend.kind === "upstream" ? (request.model as string) : undefined;
      // the tenant scopes an in-process engine's prefix cache: no tenant's prompt reuses another's cached prefix
      upstream = await backend.chat(request, context.signal, tenantId);
    } catch (error) {
      const message = `model ${choice.model.name} is unavailable: ${(error as Error).message}`;
      finish(502, { content: null, toolCalls: [], error: { message, type: "api_error" } });
      return openAiError(502, message, "api_error", "model_unavailable");
    }
    return this.relay(upstream, choice, renameTo, finish);
  }

  /** The model version that answers: the one the request names, else the tenant's route's choice; 404 for neither. */
  private async choose(
    tenantId: string,
    request: Record<string, unknown>,
    context: ChatCallContext,
  ): Promise<{ choice: RouteChoice; userId: string | undefined } | { answer: ModelAnswer }> {
    const route = await this.routing.route(tenantId);
    if (!route) {
      return {
        answer: openAiError(
          404,
          "this tenant has no deployed model: register one as promoted (arc models) first",
          "invalid_request_error",
          "model_not_found",
          "model",
        ),
      };
    }
    const userId = context.userId ?? (typeof request.user === "string" ? request.user : undefined);
    const requestedModel = request.model as string;
    const pinned = [route.control, route.canary?.model].find(
      (m) => m && (m.name === requestedModel || m.id === requestedModel),
    );
    // `arc`, or the name of a version not routed now (a canary rolled back, a model replaced), follows the route
    if (!pinned && requestedModel !== ROUTED_MODEL && !route.models.has(requestedModel))
      return { answer: modelNotFound(requestedModel) };
    const choice: RouteChoice = pinned
      ? { model: pinned, arm: "pinned" }
      : this.routing.choose(route, context.sessionId ?? userId);
    return { choice, userId };
  }

  /**
   * The model's answer handed back as its bytes, with the version's header and, from an upstream, the model renamed
   * to `renameTo`; its trace is recorded once a whole answer is handed back or a stream ends.
   */
  private relay(
    upstream: ModelAnswer,
    choice: RouteChoice,
    renameTo: string | undefined,
    finish: Finish,
  ): ModelAnswer {
    const headers: Record<string, string | string[]> = {};
    for (const name in upstream.headers) {
      if (!DROPPED_HEADERS.has(name)) headers[name] = upstream.headers[name];
    }
    headers["x-arc-model-version"] = choice.model.id;
    const { status } = upstream;
    const ok = status >= 200 && status < 300;
    if (isWholeBody(upstream.body)) {
      const bytes = upstream.body;
      const endedAt = new Date();
      this.afterResponse(() => finish(status, summarizeCompletion(parseAnswer(bytes, ok, status)), endedAt));
      // the answer's own text with its model renamed, so that it is not parsed and written again on this path
      const answer = renameTo !== undefined && ok ? renameModelInText(textOf(bytes), renameTo) : bytes;
      return { status, headers, body: answer };
    }
    const rename = renameTo !== undefined ? new StreamModelRename(renameTo) : undefined;
    const accumulator = new SseAccumulator();
    const stream = relayStream(upstream.body, {
      chunk(value) {
        accumulator.push(value);
        return rename ? rename.push(value) : value;
      },
      end() {
        finish(status, accumulator.summary());
        return rename?.end();
      },
      stop() {
        finish(499, accumulator.summary());
      },
    });
    return { status, headers, body: stream };
  }

  /** Counts the tokens of a call's LLM steps (the teacher's too, when taught), then queues its trace to be stored. */
  private record(tenantId: string, trace: Trace): void {
    const { tokens } = this.deps;
    for (const { llm } of trace.steps) {
      if (!tokens || !llm?.usage) continue;
      const model = llm.modelServed ?? llm.modelRequested ?? "unknown";
      const { promptTokens, completionTokens } = llm.usage;
      if (promptTokens) tokens.inc({ tenant: tenantId, model, kind: "prompt" }, promptTokens);
      if (completionTokens) tokens.inc({ tenant: tenantId, model, kind: "completion" }, completionTokens);
    }
    this.recorder.record(tenantId, trace);
  }

  /**
   * Runs `work` (a call's trace) once the answer has been handed back, so that the caller's response is written
   * first; `flush` waits for it.
   */
  private afterResponse(work: () => void): void {
    this.lastRecorded = new Promise((resolve) =>
      setImmediate(() => {
        try {
          work();
        } catch (error) {
          console.error("gateway: could not record a call:", error);
        }
        resolve();
      }),
    );
  }

  /** Stores the traces still queued, those of answers just handed back included (call before closing the database). */
  async flush(): Promise<void> {
    await this.lastRecorded;
    return this.recorder.flush();
  }
}
