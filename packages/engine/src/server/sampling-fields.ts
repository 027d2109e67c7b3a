import type { GenRequest } from "@arc/core";
import {
  cacheSalt,
  invalid,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  penalties,
} from "./chat-request.ts";

/** The names a server's body gives the sampling settings that differ between vLLM's and SGLang's routes. */
export interface SamplingNames {
  /** `max_tokens` (vLLM) or `max_new_tokens` (SGLang). */
  maxTokens: string;
  /** `seed` (vLLM) or `sampling_seed` (SGLang). */
  seed: string;
  /** The server's default for the most tokens to sample (vLLM 16, SGLang 128). */
  defaultMaxTokens: number;
}

/**
 * The sampling settings of a rollout request's body as the engine takes them: `n`, the token limit, `temperature`,
 * `top_p`, `top_k` (-1 for all), the seed, `stop` (a string or a list), `ignore_eos`, `logit_bias`, `frequency_penalty`
 * and `presence_penalty`; each bad value a 400 naming it.
 */
export function samplingFields(
  body: Record<string, unknown>,
  names: SamplingNames,
): Omit<GenRequest, "promptTokens" | "topLogprobs"> {
  const stop = body.stop;
  if (
    stop !== undefined &&
    stop !== null &&
    typeof stop !== "string" &&
    !(Array.isArray(stop) && stop.every((s) => typeof s === "string"))
  )
    throw invalid("stop", "expected a string or a list of strings");
  const topK = optionalInteger(body, "top_k", -1, 1_000_000);
  return {
    n: optionalInteger(body, "n", 1, 128) ?? 1,
    maxTokens: optionalInteger(body, names.maxTokens, 1, 1_000_000) ?? names.defaultMaxTokens,
    temperature: optionalNumber(body, "temperature", 0, 100) ?? 1,
    topP: optionalNumber(body, "top_p", Number.MIN_VALUE, 1) ?? 1,
    topK: topK === undefined || topK < 0 ? 0 : topK,
    seed: optionalInteger(body, names.seed, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
    stop: typeof stop === "string" ? [stop] : ((stop as string[] | null | undefined) ?? undefined),
    ignoreEos: optionalBoolean(body, "ignore_eos") ?? false,
    ...penalties(body),
    ...cacheSalt(body),
  };
}
