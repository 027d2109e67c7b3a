import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import type { GenResult, InferenceEngine, TokenEvent, ToolCallSyntax } from "@arc/core";
import { Hono } from "hono";
import { GrammarError } from "../grammar/grammar-bounds.ts";
import { ContextLengthError } from "../inference/context-length-error.ts";
import { tokenBytes, tokenString } from "../tokenizer/byte-tokenizer.ts";
import type { ChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import type { AdapterPool } from "./adapter-pool.ts";
import { type ChatCompletionRequest, parseChatRequest } from "./chat-request.ts";
import { addCompletionRoutes } from "./completion-routes.ts";
import { readJsonBody } from "./json-body.ts";
import { modelNotFound, OpenAIError } from "./openai-error.ts";
import { finishReason, type OutputPlan, openAiToolCalls, planOutput, toolCallId } from "./output-plan.ts";
import { PauseGate } from "./pause-gate.ts";
import { addSglangRoutes } from "./sglang-routes.ts";
import type { ParsedCall } from "./tool-calls/tool-call-format.ts";

/** Options of the OpenAI-compatible server. */
export interface EngineServerOptions {
  /** The id clients pass as `model` and `GET /v1/models` lists. */
  modelId: string;
  /** `max_tokens` when a request gives none (default 256). */
  defaultMaxTokens?: number;
  /** Requests in flight or queued beyond which new ones get 429 (default 256). */
  maxPendingRequests?: number;
  /** When set, every request needs `Authorization: Bearer <apiKey>`, else 401 (as vLLM's `--api-key`). */
  apiKey?: string;
  /** Largest request body in bytes; larger ones get 413 (default 10 MiB). */
  maxBodyBytes?: number;
  /** Answer any `model` name, echoing it back (the gateway routes before it calls); else only `modelId`. */
  acceptAnyModel?: boolean;
  /** How the model writes tool calls (vLLM's `--tool-call-parser`); default: what the engine's chat template says. */
  toolCallSyntax?: ToolCallSyntax;
  /** The checkpoint's tokenizer: `/v1/completions` and `/tokenize` read text prompts and write token text with it. */
  tokenizer?: ChatTokenizer;
  /** The model's context length, which `/tokenize` reports as `max_model_len`. */
  contextLength?: number;
  /** Serve `POST /update_weights_from_disk` (SGLang's), which makes the server read a checkpoint path it is sent. */
  allowWeightUpdates?: boolean;
  /** LoRA adapters of the served model, sampled as `model: <adapter name>`, with vLLM's routes to load and unload them. */
  adapters?: AdapterPool;
}

/** `maxBodyBytes` when none is given. */
const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

const sha256 = (text: string) => createHash("sha256").update(text).digest();

/** Whether the request carries `Authorization: Bearer <key>`, compared in constant time. */
function hasKey(authorization: string | undefined, key: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(authorization ?? "");
  return match !== null && timingSafeEqual(sha256(match[1].trim()), sha256(key));
}

type LogprobEntry = { token: string; logprob: number; bytes: number[] };

function logprobEntry(token: number, logprob: number): LogprobEntry {
  return { token: tokenString(token), logprob, bytes: tokenBytes(token) };
}

function contentLogprobs(
  tokens: number[],
  logprobs: number[],
  top: { token: number; logprob: number }[][] | undefined,
): (LogprobEntry & { top_logprobs: LogprobEntry[] })[] {
  return tokens.map((t, i) => ({
    ...logprobEntry(t, logprobs[i]),
    top_logprobs: (top?.[i] ?? []).map((alt) => logprobEntry(alt.token, alt.logprob)),
  }));
}

/**
 * An OpenAI-compatible HTTP app over any InferenceEngine: `POST /v1/chat/completions` (stream and not,
 * n, logprobs/top_logprobs, seed, stop, max_tokens/max_completion_tokens, temperature, top_p, logit_bias,
 * frequency_penalty, presence_penalty, tools with tool_choice, response_format), `GET /v1/models[/{id}]`, and vLLM's
 * and SGLang's routes for RL rollouts
 * (`completion-routes.ts`). Concurrent requests share the engine's batch; a client
 * that disconnects aborts its generation. The gateway mounts this in-process; `arc engine serve` puts it on a port.
 */
export function createEngineServer(engine: InferenceEngine, options: EngineServerOptions): Hono {
  const app = new Hono();
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const admit = pendingLimit(options.maxPendingRequests ?? 256);
  addErrorAnswers(app);
  if (options.apiKey) addApiKeyCheck(app, options.apiKey);
  addModelRoutes(app, options);
  const engineFor = engineResolver(engine, options);
  if (options.adapters) addAdapterRoutes(app, options.adapters, maxBodyBytes);
  addChatRoute(app, {
    engineFor,
    admit,
    maxBodyBytes,
    defaultMaxTokens: options.defaultMaxTokens ?? 256,
    syntax: options.toolCallSyntax ?? engine.toolCallSyntax,
  });
  const gate = new PauseGate();
  addCompletionRoutes(app, engine, { ...options, maxBodyBytes, admit, engineFor, gate });
  addSglangRoutes(app, engine, { ...options, maxBodyBytes, admit, gate });
  return app;
}

/** Counts a request in; 429 past `maxPending` in flight or queued. Returns the function that counts it out. */
function pendingLimit(maxPending: number): () => () => void {
  let pending = 0;
  return () => {
    if (pending >= maxPending)
      throw new OpenAIError(429, `too many requests: ${pending} in flight or queued (limit ${maxPending})`, {
        type: "requests",
        code: "rate_limit_exceeded",
      });
    pending++;
    return () => {
      pending--;
    };
  };
}

/** Answers every error and unknown route as OpenAI does: an `error` body with its status. */
function addErrorAnswers(app: Hono): void {
  app.onError((error, c) => {
    const e =
      error instanceof OpenAIError
        ? error
        : error instanceof ContextLengthError
          ? new OpenAIError(
              400,
              `This model's maximum context length is ${error.contextTokens} tokens. However, your messages resulted in ${error.promptTokens} tokens, which leaves no room for a reply. Please reduce the length of the messages.`,
              { param: "messages", code: "context_length_exceeded" },
            )
          : error instanceof TypeError
            ? new OpenAIError(400, error.message)
            : new OpenAIError(500, `internal error: ${error.message}`);
    return c.json(e.body(), e.status as 400);
  });
  app.notFound((c) =>
    c.json(new OpenAIError(404, `Invalid URL (${c.req.method} ${c.req.path})`).body(), 404),
  );
}

/** Refuses, with 401, every request without `Authorization: Bearer <apiKey>`. */
function addApiKeyCheck(app: Hono, apiKey: string): void {
  app.use(async (c, next) => {
    if (hasKey(c.req.header("authorization"), apiKey)) return next();
    throw new OpenAIError(
      401,
      c.req.header("authorization")
        ? "invalid API key: the key sent does not match the one this server was started with"
        : "missing API key: send the header Authorization: Bearer <key>",
      { code: "invalid_api_key" },
    );
  });
}

/** `GET /v1/models[/{id}]`: the base, then each adapter (vLLM names its base as `parent`). */
function addModelRoutes(app: Hono, options: EngineServerOptions): void {
  const started = Math.floor(Date.now() / 1000);
  const model = { id: options.modelId, object: "model", created: started, owned_by: "arc" };
  const models = () => [
    model,
    ...(options.adapters?.names() ?? []).map((id) => ({ ...model, id, parent: options.modelId })),
  ];
  app.get("/v1/models", (c) => c.json({ object: "list", data: models() }));
  app.get("/v1/models/:id{.+}", (c) => {
    const found = models().find((m) => m.id === c.req.param("id"));
    if (found) return c.json(found);
    throw modelNotFound(c.req.param("id"));
  });
}

/** The engine that answers a model name: the served model's, or an adapter's; 404 for any other. */
function engineResolver(
  engine: InferenceEngine,
  options: EngineServerOptions,
): (name: string) => Promise<InferenceEngine> {
  return async (name) => {
    const adapted = name === options.modelId ? undefined : options.adapters?.engineFor(name);
    if (adapted) return adapted;
    if (name === options.modelId || options.acceptAnyModel) return engine;
    throw modelNotFound(name);
  };
}

/** What the chat route works with. */
interface ChatRouteContext {
  engineFor(name: string): Promise<InferenceEngine>;
  admit(): () => void;
  maxBodyBytes: number;
  defaultMaxTokens: number;
  syntax: InferenceEngine["toolCallSyntax"];
}

/** `POST /v1/chat/completions`: a whole completion, or a stream of chunks; a client that disconnects aborts it. */
function addChatRoute(
  app: Hono,
  { engineFor, admit, maxBodyBytes, defaultMaxTokens, syntax }: ChatRouteContext,
): void {
  app.post("/v1/chat/completions", async (c) => {
    const created = Math.floor(Date.now() / 1000);
    const req = parseChatRequest(await readJsonBody(c.req.raw, maxBodyBytes), defaultMaxTokens);
    const target = await engineFor(req.model);
    const plan = planOutput(req, syntax);
    const release = admit();
    const id = `chatcmpl-${randomUUID()}`;
    const abort = new AbortController();
    c.req.raw.signal.addEventListener("abort", () => abort.abort(), { once: true });
    const generation = { ...req.generation, grammar: plan.grammar, signal: abort.signal };
    if (!req.stream) {
      try {
        const results = await target.generate([generation]).catch((error: unknown) => {
          throw error instanceof GrammarError ? grammarRefusal(error, plan) : error;
        });
        return c.json(completionBody(id, created, req, plan, results), 200, {
          "x-arc-weight-version": String(results[0]?.outputVersions[0] ?? target.getVersion()),
        });
      } finally {
        release();
      }
    }
    return streamCompletion(target, { id, created, req, plan }, generation, abort, release);
  });
}

/** vLLM's routes that load and unload LoRA adapters at run time; success answers are plain text, as vLLM's. */
function addAdapterRoutes(app: Hono, adapters: AdapterPool, maxBodyBytes: number): void {
  const name = (body: Record<string, unknown>) => {
    if (typeof body?.lora_name !== "string" || body.lora_name === "")
      throw new OpenAIError(400, "Both 'lora_name' and 'lora_path' must be provided.", {
        type: "InvalidUserInput",
      });
    return body.lora_name;
  };
  app.post("/v1/load_lora_adapter", async (c) => {
    const body = (await readJsonBody(c.req.raw, maxBodyBytes)) as Record<string, unknown>;
    const lora = name(body);
    if (typeof body.lora_path !== "string" || body.lora_path === "")
      throw new OpenAIError(400, "Both 'lora_name' and 'lora_path' must be provided.", {
        type: "InvalidUserInput",
      });
    await adapters.register(lora, body.lora_path);
    return c.text(`Success: LoRA adapter '${lora}' added successfully.`);
  });
  app.post("/v1/unload_lora_adapter", async (c) => {
    const lora = name((await readJsonBody(c.req.raw, maxBodyBytes)) as Record<string, unknown>);
    adapters.unregister(lora);
    return c.text(`Success: LoRA adapter '${lora}' removed successfully.`);
  });
}

/** A grammar the engine could not follow within its bounds: the request's fault, a 400 naming the field it came from. */
function grammarRefusal(error: GrammarError, plan: OutputPlan): OpenAIError {
  const param = plan.grammarParam ?? "response_format";
  return new OpenAIError(400, `${param}: ${error.message}`, { param });
}

/** The assistant message of a finished sample: its content, and its tool calls when the request offered tools. */
function choiceOf(r: GenResult, plan: OutputPlan) {
  const parsed = plan.format ? plan.format.parse(r.text) : { content: r.text, toolCalls: [] };
  const toolCalls = openAiToolCalls(parsed.toolCalls);
  return {
    message: {
      role: "assistant",
      content: parsed.content,
      refusal: null,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    },
    finish_reason: r.finishReason === "abort" ? "stop" : finishReason(r.finishReason, toolCalls.length, plan),
  };
}

function completionBody(
  id: string,
  created: number,
  req: ChatCompletionRequest,
  plan: OutputPlan,
  results: GenResult[],
) {
  const completionTokens = results.reduce((n, r) => n + r.outputTokens.length, 0);
  return {
    id,
    object: "chat.completion",
    created,
    model: req.model,
    system_fingerprint: `arc-w${results[0]?.outputVersions[0] ?? 0}`,
    choices: results.map((r) => {
      const { message, finish_reason } = choiceOf(r, plan);
      return {
        index: r.sampleIndex,
        message,
        logprobs: req.logprobs
          ? { content: contentLogprobs(r.outputTokens, r.outputLogprobs, r.topLogprobs), refusal: null }
          : null,
        finish_reason,
      };
    }),
    usage: {
      prompt_tokens: results[0]?.promptTokens.length ?? 0,
      completion_tokens: completionTokens,
      total_tokens: (results[0]?.promptTokens.length ?? 0) + completionTokens,
    },
  };
}

/** A tool call being streamed: its id and the arguments sent so far. */
interface StreamedCall {
  id: string;
  arguments: string;
}

/** The facts every chunk of one completion repeats. */
interface CompletionHead {
  id: string;
  created: number;
  req: ChatCompletionRequest;
  plan: OutputPlan;
}

/** What a stream has of one sample: its text so far, how much of it went out as content, the calls it streamed. */
interface StreamSample {
  text: string;
  sent: number;
  calls: StreamedCall[];
}

/** Writes a completion stream's events; nothing once the client has gone. */
interface ChunkWriter {
  /** One `data:` event. */
  send(data: unknown): void;
  /** A `chat.completion.chunk` of `choices` (with `usage` where the request asked for usage). */
  chunk(choices: unknown[], usage?: unknown): void;
  /** A chunk of one choice's delta. */
  delta(index: number, d: Record<string, unknown>, logprobs?: unknown): void;
  /** `[DONE]`, then the end of the stream. */
  done(): void;
}

/** The writer of one completion stream on `controller`. */
function chunkWriter(
  controller: ReadableStreamDefaultController<Uint8Array>,
  engine: InferenceEngine,
  head: CompletionHead,
  abort: AbortController,
): ChunkWriter {
  const encoder = new TextEncoder();
  const send = (data: unknown) => {
    if (abort.signal.aborted) return;
    controller.enqueue(encoder.encode(`data: ${JSON.stringify(data)}\n\n`));
  };
  const chunk = (choices: unknown[], usage: unknown = null) =>
    send({
      id: head.id,
      object: "chat.completion.chunk",
      created: head.created,
      model: head.req.model,
      system_fingerprint: `arc-w${engine.getVersion()}`,
      choices,
      ...(head.req.includeUsage ? { usage } : {}),
    });
  return {
    send,
    chunk,
    delta: (index, d, logprobs = null) => chunk([{ index, delta: d, logprobs, finish_reason: null }]),
    done() {
      if (abort.signal.aborted) return;
      controller.enqueue(encoder.encode("data: [DONE]\n\n"));
      controller.close();
    },
  };
}

/** Sends what is new of each call: its id and name the first time, then the arguments written since. */
function sendCalls(writer: ChunkWriter, streamed: StreamedCall[], index: number, calls: ParsedCall[]): void {
  calls.forEach((call, i) => {
    if (!streamed[i]) {
      streamed[i] = { id: toolCallId(), arguments: "" };
      writer.delta(index, {
        tool_calls: [
          {
            index: i,
            id: streamed[i].id,
            type: "function",
            function: { name: call.name, arguments: "" },
          },
        ],
      });
    }
    const sent = streamed[i].arguments;
    if (call.arguments.length > sent.length && call.arguments.startsWith(sent)) {
      writer.delta(index, {
        tool_calls: [{ index: i, function: { arguments: call.arguments.slice(sent.length) } }],
      });
      streamed[i].arguments = call.arguments;
    }
  });
}

/** Streams each token as it comes: content not held back for a call, the calls' deltas, and each sample's finish. */
function tokenStreamer(
  writer: ChunkWriter,
  samples: StreamSample[],
  { req, plan }: CompletionHead,
): (e: TokenEvent) => void {
  return (e) => {
    if (e.token < 0 || e.finishReason === "abort") return;
    const sample = samples[e.sampleIndex];
    sample.text += e.textDelta;
    const partial = plan.format?.partial(sample.text);
    const upTo = partial ? partial.contentLength : sample.text.length;
    const content = sample.text.slice(sample.sent, Math.max(sample.sent, upTo));
    sample.sent = Math.max(sample.sent, upTo);
    const logprobs = req.logprobs
      ? {
          content: contentLogprobs([e.token], [e.logprob], e.topLogprobs ? [e.topLogprobs] : undefined),
          refusal: null,
        }
      : null;
    if (content || logprobs) writer.delta(e.sampleIndex, { content }, logprobs);
    if (partial) sendCalls(writer, sample.calls, e.sampleIndex, partial.calls);
    if (!e.finishReason) return;
    const calls = plan.format?.parse(sample.text).toolCalls ?? [];
    if (calls.length === 0 && sample.sent < sample.text.length)
      writer.delta(e.sampleIndex, { content: sample.text.slice(sample.sent) });
    sendCalls(writer, sample.calls, e.sampleIndex, calls);
    writer.chunk([
      {
        index: e.sampleIndex,
        delta: {},
        logprobs: null,
        finish_reason: finishReason(e.finishReason, calls.length, plan),
      },
    ]);
  };
}

/**
 * Server-sent events: a role chunk per choice, content chunks as tokens come, then per choice a finish chunk, a
 * usage chunk when asked for, and `[DONE]`. Where the request offered tools, text that is or may become a call is
 * held back from content; a call streams as OpenAI streams it, as `tool_calls` deltas: its id, type and name with
 * empty arguments once the name is written, then the arguments as they come.
 */
function streamCompletion(
  engine: InferenceEngine,
  head: CompletionHead,
  generation: ChatCompletionRequest["generation"],
  abort: AbortController,
  release: () => void,
): Response {
  const { req, plan } = head;
  const n = generation.n ?? 1;
  const samples = Array.from({ length: n }, (): StreamSample => ({ text: "", sent: 0, calls: [] }));
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const writer = chunkWriter(controller, engine, head, abort);
      for (let i = 0; i < n; i++) writer.delta(i, { role: "assistant", content: "" });
      engine
        .generate([generation], { onToken: tokenStreamer(writer, samples, head) })
        .then((results) => {
          if (req.includeUsage) {
            const completion = results.reduce((s, r) => s + r.outputTokens.length, 0);
            const prompt = results[0]?.promptTokens.length ?? 0;
            writer.chunk([], {
              prompt_tokens: prompt,
              completion_tokens: completion,
              total_tokens: prompt + completion,
            });
          }
          writer.done();
        })
        .catch((error: Error) => {
          const refusal =
            error instanceof GrammarError
              ? grammarRefusal(error, plan)
              : new OpenAIError(500, `generation failed: ${error.message}`);
          writer.send({ error: refusal.body().error });
          if (!abort.signal.aborted) controller.close();
        })
        .finally(release);
    },
    cancel() {
      abort.abort();
    },
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" },
  });
}
