/**
 * SGLang's native routes that RL trainers sample through (shapes from sglang's `GenerateReqInput`, `SamplingParams`
 * and `tokenizer_manager._handle_batch_output`): `POST /generate` with token ids in and out and per-token log-probs,
 * and, where weight updates are allowed, `POST /pause_generation` and `/continue_generation`.
 */
import { randomUUID } from "node:crypto";
import type { GenRequest, GenResult, InferenceEngine } from "@arc/core";
import type { Hono } from "hono";
import type { ChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { invalid, optionalBoolean, optionalInteger } from "./chat-request.ts";
import { readJsonBody } from "./json-body.ts";
import { OpenAIError } from "./openai-error.ts";
import { enterRollout, type PauseGate, type PauseMode } from "./pause-gate.ts";
import { samplingFields } from "./sampling-fields.ts";

/** What the SGLang routes need from the server they are mounted on. */
export interface SglangRoutesOptions {
  maxBodyBytes: number;
  tokenizer?: ChatTokenizer;
  allowWeightUpdates?: boolean;
  /** Counts a request in (429 past the server's limit); returns the function that counts it out. */
  admit: () => () => void;
  gate: PauseGate;
}

/** The most prompts one `/generate` request may carry. */
const MAX_PROMPTS = 256;

/** A validated `POST /generate` body: one prompt or a batch, each with its sampling. */
interface GenerateRequest {
  prompts: number[][];
  /** Whether the body was a batch (the answer is then a list; one prompt with `n` > 1 is a batch too). */
  batch: boolean;
  generations: Omit<GenRequest, "promptTokens">[];
  returnLogprob: boolean;
  rids: string[];
}

/** Runs `parse`, naming `prefix` in the 400 it throws (`sampling_params.max_new_tokens: ...`). */
function within<T>(prefix: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof OpenAIError && error.status === 400) throw invalid(prefix, error.message);
    throw error;
  }
}

/** Sampling parameters this server lacks, at the values that change nothing (which RL clients send as they are). */
const NEUTRAL: Record<string, unknown> = {
  min_p: 0,
  repetition_penalty: 1,
  min_new_tokens: 0,
};

function isNeutral(key: string, value: unknown): boolean {
  if (key === "stop_token_ids") return Array.isArray(value) && value.length === 0;
  return Object.hasOwn(NEUTRAL, key) && NEUTRAL[key] === value;
}

/** The top-level fields of `/generate` this server reads; any other is refused by name, not ignored. */
const GENERATE_FIELDS = new Set([
  "text",
  "input_ids",
  "sampling_params",
  "return_logprob",
  "logprob_start_len",
  "top_logprobs_num",
  "return_text_in_logprobs",
  "stream",
  "rid",
]);

/** SGLang's `SamplingParams` as the engine takes them; `null` means the default, as in SGLang. */
function samplingParams(raw: unknown, topLogprobs: number): Omit<GenRequest, "promptTokens"> {
  const params = (raw ?? {}) as Record<string, unknown>;
  if (typeof params !== "object" || Array.isArray(params)) throw new OpenAIError(400, "expected an object");
  const known = new Set([
    "max_new_tokens",
    "temperature",
    "top_p",
    "top_k",
    "n",
    "stop",
    "ignore_eos",
    "sampling_seed",
    "skip_special_tokens",
    "spaces_between_special_tokens",
    "no_stop_trim",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
  ]);
  for (const [key, value] of Object.entries(params))
    if (!known.has(key) && value !== null && value !== undefined && !isNeutral(key, value))
      throw invalid(key, `this server does not support it (it supports ${[...known].join(", ")})`);
  return {
    ...samplingFields(params, { maxTokens: "max_new_tokens", seed: "sampling_seed", defaultMaxTokens: 128 }),
    topLogprobs,
  };
}

function parseGenerateRequest(raw: unknown, tokenizer: ChatTokenizer | undefined): GenerateRequest {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new OpenAIError(400, "expected a JSON object as the body");
  const body = raw as Record<string, unknown>;
  for (const [key, value] of Object.entries(body))
    if (!GENERATE_FIELDS.has(key) && value !== null && value !== undefined)
      throw invalid(key, `this server does not support it (it reads ${[...GENERATE_FIELDS].join(", ")})`);
  if (body.stream === true)
    throw invalid("stream", "this server answers /generate whole; stream with /v1/chat/completions");
  if (body.return_text_in_logprobs === true)
    throw invalid("return_text_in_logprobs", "this server writes null for each token's text");
  if (
    body.logprob_start_len !== undefined &&
    body.logprob_start_len !== null &&
    body.logprob_start_len !== -1
  )
    throw invalid("logprob_start_len", "this server returns the output tokens' log-probs only (-1)");
  const ids = (v: unknown) =>
    Array.isArray(v) && v.length > 0 && v.every((t) => Number.isInteger(t) && t >= 0);
  let prompts: number[][];
  let batch: boolean;
  if (body.input_ids !== undefined && body.input_ids !== null) {
    if (body.text !== undefined && body.text !== null) throw invalid("text", "give either text or input_ids");
    if (ids(body.input_ids)) [prompts, batch] = [[body.input_ids as number[]], false];
    else if (Array.isArray(body.input_ids) && body.input_ids.length > 0 && body.input_ids.every(ids))
      [prompts, batch] = [body.input_ids as number[][], true];
    else throw invalid("input_ids", "expected a non-empty list of token ids, or a list of them");
  } else if (typeof body.text === "string" || Array.isArray(body.text)) {
    if (!tokenizer) throw invalid("text", "this server takes input_ids only (it has no tokenizer for text)");
    const texts = typeof body.text === "string" ? [body.text] : body.text;
    if (!texts.every((t) => typeof t === "string"))
      throw invalid("text", "expected a string or a list of strings");
    [prompts, batch] = [texts.map((t) => tokenizer.encode(t as string)), Array.isArray(body.text)];
  } else throw invalid("input_ids", "expected input_ids (token ids) or text");
  if (prompts.length > MAX_PROMPTS)
    throw invalid("input_ids", `expected at most ${MAX_PROMPTS} prompts, got ${prompts.length}`);
  const topLogprobs = optionalInteger(body, "top_logprobs_num", 0, 20) ?? 0;
  const params = body.sampling_params;
  if (Array.isArray(params) && params.length !== prompts.length)
    throw invalid("sampling_params", `expected one per prompt (${prompts.length}), got ${params.length}`);
  const generations = prompts.map((_, i) =>
    within(Array.isArray(params) ? `sampling_params[${i}]` : "sampling_params", () =>
      samplingParams(Array.isArray(params) ? params[i] : params, topLogprobs),
    ),
  );
  const rid = body.rid;
  let rids: string[];
  if (rid === undefined || rid === null) rids = prompts.map(() => randomUUID().replaceAll("-", ""));
  else if (typeof rid === "string") rids = batch ? prompts.map((_, i) => `${rid}_${i}`) : [rid];
  else if (Array.isArray(rid) && rid.length === prompts.length && rid.every((r) => typeof r === "string"))
    rids = rid as string[];
  else throw invalid("rid", "expected a string, or one string per prompt");
  return {
    prompts,
    batch: batch || generations.some((g) => (g.n ?? 1) > 1),
    generations,
    returnLogprob: optionalBoolean(body, "return_logprob") ?? false,
    rids,
  };
}

/** SGLang's `finish_reason` object. */
function finishReason(r: GenResult) {
  if (r.finishReason === "length") return { type: "length", length: r.outputTokens.length };
  if (r.finishReason === "abort") return { type: "abort", message: "Aborted" };
  return { type: "stop" };
}

/** One sample as SGLang answers it: text, output ids and `meta_info`. */
function sampleAnswer(r: GenResult, rid: string, returnLogprob: boolean, version: number) {
  const entry = (logprob: number, token: number) => [logprob, token, null];
  return {
    text: r.text,
    output_ids: r.outputTokens,
    meta_info: {
      id: rid,
      finish_reason: finishReason(r),
      prompt_tokens: r.promptTokens.length,
      completion_tokens: r.outputTokens.length,
      cached_tokens: 0,
      weight_version: String(r.outputVersions.at(-1) ?? version),
      // Arc's extension: the weight version that sampled each output token, for staleness accounting
      output_token_weight_versions: r.outputVersions,
      ...(returnLogprob
        ? {
            output_token_logprobs: r.outputTokens.map((t, i) => entry(r.outputLogprobs[i], t)),
            output_top_logprobs: r.outputTokens.map((_, i) =>
              (r.topLogprobs?.[i] ?? []).map((alt) => entry(alt.logprob, alt.token)),
            ),
          }
        : {}),
    },
  };
}

/** Mounts SGLang's routes on `app`. */
export function addSglangRoutes(app: Hono, engine: InferenceEngine, options: SglangRoutesOptions): void {
  app.post("/generate", async (c) => {
    const req = parseGenerateRequest(await readJsonBody(c.req.raw, options.maxBodyBytes), options.tokenizer);
    const { signal, done } = await enterRollout(c.req.raw, options.admit, options.gate);
    try {
      const results = await engine.generate(
        req.prompts.map((p, i) => ({
          ...req.generations[i],
          id: String(i),
          promptTokens: p,
          signal,
        })),
      );
      // prompt by prompt, each prompt's n samples in turn, as SGLang lists them
      const answers = results.map((r) => {
        const i = Number(r.requestId);
        const n = req.generations[i].n ?? 1;
        const rid = n > 1 ? `${req.rids[i]}_${r.sampleIndex}` : req.rids[i];
        return sampleAnswer(r, rid, req.returnLogprob, engine.getVersion());
      });
      return c.json(req.batch ? answers : answers[0]);
    } finally {
      done();
    }
  });

  if (!options.allowWeightUpdates) return;
  app.post("/pause_generation", async (c) => {
    const text = await c.req.text();
    let body: { mode?: unknown };
    try {
      body = text.trim() === "" ? {} : JSON.parse(text);
    } catch {
      throw new OpenAIError(400, 'expected a JSON object as the body, e.g. {"mode": "in_place"}');
    }
    const mode = body?.mode ?? "abort";
    if (mode !== "abort" && mode !== "retract" && mode !== "in_place")
      throw invalid("mode", `expected abort, retract or in_place, got ${JSON.stringify(mode)}`);
    options.gate.pause(mode as PauseMode);
    return c.json({ message: "Generation paused successfully.", status: "ok" });
  });
  app.post("/continue_generation", (c) => {
    options.gate.resume();
    return c.json({ message: "Generation continued successfully.", status: "ok" });
  });
}
