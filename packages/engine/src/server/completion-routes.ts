/**
 * The routes RL trainers use on vLLM and SGLang servers, so `arc engine serve` stands in for either:
 * `POST /v1/completions` with token-id prompts, per-token log-probs and token ids (vLLM's
 * `return_tokens_as_token_ids` / `return_token_ids`), `POST /tokenize`, `GET /health`, and SGLang's
 * `POST /update_weights_from_disk` when weight updates are allowed. SGLang's `/generate` and pause are in
 * `sglang-routes.ts`.
 */
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import type { GenRequest, GenResult, InferenceEngine } from "@arc/core";
import type { Hono } from "hono";
import type { ChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { invalid, optionalBoolean, optionalInteger, unsupported } from "./chat-request.ts";
import { readJsonBody } from "./json-body.ts";
import { OpenAIError } from "./openai-error.ts";
import { COMPLETION_PARAMETERS, unrecognizedArguments } from "./openai-parameters.ts";
import { enterRollout, type PauseGate } from "./pause-gate.ts";
import { samplingFields } from "./sampling-fields.ts";

/** What the completion routes need from the server they are mounted on. */
export interface CompletionRoutesOptions {
  maxBodyBytes: number;
  tokenizer?: ChatTokenizer;
  contextLength?: number;
  allowWeightUpdates?: boolean;
  /** Counts a request in (429 past the server's limit); returns the function that counts it out. */
  admit: () => () => void;
  /** The engine that answers a `model` name (the served model's or an adapter's); 404 for any other. */
  engineFor: (model: string) => Promise<InferenceEngine>;
  /** SGLang's pause: completions wait while generation is paused. */
  gate: PauseGate;
}

/** The most prompts one `/v1/completions` request may carry. */
const MAX_PROMPTS = 256;
/** vLLM's floor for a log-prob it reports (`max(logprob, -9999.0)`). */
const LOGPROB_FLOOR = -9999;

/** A validated `POST /v1/completions` body. */
interface CompletionRequest {
  model: string;
  prompts: number[][];
  generation: Omit<GenRequest, "promptTokens">;
  /** Log-probs of this many alternatives besides the sampled token (vLLM's `logprobs`), or none at all. */
  logprobs: number | undefined;
  tokensAsIds: boolean;
  returnTokenIds: boolean;
  /** Arc's extension: the weight version of every output token, for staleness accounting. */
  returnWeightVersions: boolean;
}

function promptTokens(body: Record<string, unknown>, tokenizer: ChatTokenizer | undefined): number[][] {
  const prompt = body.prompt;
  const idList = (v: unknown) =>
    Array.isArray(v) && v.length > 0 && v.every((t) => Number.isInteger(t) && t >= 0);
  const text = (s: string, param: string) => {
    if (!tokenizer)
      throw invalid(param, "this server takes token-id prompts only (it has no tokenizer for text)");
    return tokenizer.encode(s);
  };
  let prompts: number[][];
  if (typeof prompt === "string") prompts = [text(prompt, "prompt")];
  else if (idList(prompt)) prompts = [prompt as number[]];
  else if (Array.isArray(prompt) && prompt.length > 0)
    prompts = prompt.map((p, i) => {
      if (typeof p === "string") return text(p, `prompt[${i}]`);
      if (idList(p)) return p as number[];
      throw invalid(`prompt[${i}]`, "expected a string or a non-empty list of token ids (integers >= 0)");
    });
  else
    throw invalid(
      "prompt",
      "expected a string, a list of strings, or one or more non-empty lists of token ids",
    );
  if (prompts.length > MAX_PROMPTS)
    throw invalid("prompt", `expected at most ${MAX_PROMPTS} prompts, got ${prompts.length}`);
  return prompts;
}

function parseCompletionRequest(raw: unknown, tokenizer: ChatTokenizer | undefined): CompletionRequest {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new OpenAIError(400, "expected a JSON object as the body");
  const body = raw as Record<string, unknown>;
  const unrecognized = unrecognizedArguments(body, COMPLETION_PARAMETERS);
  if (unrecognized) throw new OpenAIError(400, unrecognized);
  if (typeof body.model !== "string" || body.model === "") throw invalid("model", "expected the model's id");
  if (body.stream === true)
    throw invalid("stream", "this server answers /v1/completions whole; stream with /v1/chat/completions");
  if (body.echo === true) throw invalid("echo", "echoing the prompt is not supported");
  if (body.suffix !== undefined && body.suffix !== null)
    throw unsupported("suffix", "it inserts no text before a suffix");
  if (body.best_of !== undefined && body.best_of !== null && body.best_of !== 1)
    throw unsupported("best_of", "it returns every sample; ask for several with n");
  const logprobs = optionalInteger(body, "logprobs", 0, 20);
  return {
    model: body.model,
    prompts: promptTokens(body, tokenizer),
    generation: {
      ...samplingFields(body, { maxTokens: "max_tokens", seed: "seed", defaultMaxTokens: 16 }),
      topLogprobs: logprobs ?? 0,
    },
    logprobs,
    tokensAsIds: optionalBoolean(body, "return_tokens_as_token_ids") ?? false,
    returnTokenIds: optionalBoolean(body, "return_token_ids") ?? false,
    returnWeightVersions: optionalBoolean(body, "return_weight_versions") ?? false,
  };
}

/** How a token is written in `logprobs`: vLLM's `token_id:<id>` placeholder, or its text. */
function tokenLabel(token: number, asId: boolean, tokenizer: ChatTokenizer | undefined): string {
  return asId || !tokenizer ? `token_id:${token}` : tokenizer.decode([token]);
}

/** vLLM's `CompletionLogProbs` of one sample: up to `logprobs + 1` alternatives a token (the sampled one among them). */
function completionLogprobs(r: GenResult, req: CompletionRequest, tokenizer: ChatTokenizer | undefined) {
  const label = (t: number) => tokenLabel(t, req.tokensAsIds, tokenizer);
  const floor = (x: number) => Math.max(x, LOGPROB_FLOOR);
  const textOffset: number[] = [];
  let offset = 0;
  for (const t of r.outputTokens) {
    textOffset.push(offset);
    offset += tokenizer ? tokenizer.decode([t]).length : 0;
  }
  return {
    text_offset: textOffset,
    token_logprobs: r.outputLogprobs.map(floor),
    tokens: r.outputTokens.map(label),
    top_logprobs: r.outputTokens.map((t, i) => {
      const top: Record<string, number> = { [label(t)]: floor(r.outputLogprobs[i]) };
      for (const alt of r.topLogprobs?.[i] ?? []) top[label(alt.token)] = floor(alt.logprob);
      return top;
    }),
  };
}

/** Mounts the completion routes on `app`. */
export function addCompletionRoutes(
  app: Hono,
  engine: InferenceEngine,
  options: CompletionRoutesOptions,
): void {
  const { tokenizer } = options;

  app.get("/health", (c) => c.body(null, 200));

  app.post("/tokenize", async (c) => {
    const body = (await readJsonBody(c.req.raw, options.maxBodyBytes)) as Record<string, unknown>;
    if (!tokenizer) throw new OpenAIError(400, "this server has no tokenizer to tokenize with");
    let tokens: number[];
    if (typeof body?.prompt === "string") tokens = tokenizer.encode(body.prompt);
    else if (Array.isArray(body?.messages))
      tokens = tokenizer.render(body.messages, Array.isArray(body.tools) ? { tools: body.tools } : {});
    else throw invalid("prompt", "expected a prompt string or a messages list");
    return c.json({
      count: tokens.length,
      max_model_len: options.contextLength ?? null,
      tokens,
      token_strs: null,
    });
  });

  app.post("/v1/completions", async (c) => {
    const req = parseCompletionRequest(await readJsonBody(c.req.raw, options.maxBodyBytes), tokenizer);
    const target = await options.engineFor(req.model);
    const { signal, done } = await enterRollout(c.req.raw, options.admit, options.gate);
    try {
      const results = await target.generate(
        req.prompts.map((p, i) => ({
          ...req.generation,
          id: String(i),
          promptTokens: p,
          signal,
        })),
      );
      // vLLM's order: prompt by prompt, each prompt's n samples in turn (index = prompt * n + sample)
      const choices = results.map((r, index) => ({
        index,
        text: r.text,
        logprobs: req.logprobs === undefined ? null : completionLogprobs(r, req, tokenizer),
        finish_reason: r.finishReason,
        stop_reason: null,
        ...(req.returnTokenIds ? { token_ids: r.outputTokens, prompt_token_ids: r.promptTokens } : {}),
        ...(req.returnWeightVersions ? { weight_versions: r.outputVersions } : {}),
      }));
      const promptCount = req.prompts.reduce((a, p) => a + p.length, 0);
      const completionCount = results.reduce((a, r) => a + r.outputTokens.length, 0);
      return c.json({
        id: `cmpl-${randomUUID()}`,
        object: "text_completion",
        created: Math.floor(Date.now() / 1000),
        model: req.model,
        choices,
        usage: {
          prompt_tokens: promptCount,
          completion_tokens: completionCount,
          total_tokens: promptCount + completionCount,
        },
      });
    } finally {
      done();
    }
  });

  if (options.allowWeightUpdates) {
    app.post("/update_weights_from_disk", async (c) => {
      const body = (await readJsonBody(c.req.raw, options.maxBodyBytes)) as Record<string, unknown>;
      if (typeof body?.model_path !== "string" || body.model_path === "")
        return c.json({ success: false, message: "model_path: expected a checkpoint directory" }, 400);
      const given = body.weight_version;
      const version =
        given === undefined || given === null ? engine.getVersion() + 1 : Number.parseInt(String(given), 10);
      if (!Number.isInteger(version) || version < 0)
        return c.json(
          { success: false, message: `weight_version: expected a whole number, got ${given}` },
          400,
        );
      try {
        await engine.setWeights(version, { kind: "checkpoint", dir: resolve(body.model_path) });
      } catch (error) {
        return c.json({ success: false, message: `${body.model_path}: ${(error as Error).message}` }, 400);
      }
      return c.json({ success: true, message: "Succeeded to update model weights.", num_paused_requests: 0 });
    });
  }
}
