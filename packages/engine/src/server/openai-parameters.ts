/**
 * The body parameters Arc's OpenAI-compatible routes accept: those OpenAI documents (the `openai` package's
 * `ChatCompletionCreateParams` and `CompletionCreateParams`) and the few Arc adds. Any other is refused as OpenAI
 * refuses it: 400 `invalid_request_error`, "Unrecognized request argument supplied: x", no param, no code.
 */

/**
 * `POST /v1/chat/completions`: OpenAI's parameters, and vLLM's `top_k` and `cache_salt`, which Arc's engines
 * implement.
 */
export const CHAT_COMPLETION_PARAMETERS: ReadonlySet<string> = new Set([
  "messages",
  "model",
  "audio",
  "frequency_penalty",
  "function_call",
  "functions",
  "logit_bias",
  "logprobs",
  "max_completion_tokens",
  "max_tokens",
  "metadata",
  "modalities",
  "moderation",
  "n",
  "parallel_tool_calls",
  "prediction",
  "presence_penalty",
  "prompt_cache_key",
  "prompt_cache_options",
  "prompt_cache_retention",
  "reasoning_effort",
  "response_format",
  "safety_identifier",
  "seed",
  "service_tier",
  "stop",
  "store",
  "stream",
  "stream_options",
  "temperature",
  "tool_choice",
  "tools",
  "top_logprobs",
  "top_p",
  "user",
  "verbosity",
  "web_search_options",
  "top_k",
  "cache_salt",
]);

/**
 * `POST /v1/completions`: OpenAI's parameters, and what RL trainers send a vLLM server that Arc's engine implements
 * (`top_k`, `ignore_eos`, `return_tokens_as_token_ids`, `return_token_ids`, `cache_salt`), and Arc's
 * `return_weight_versions`.
 */
export const COMPLETION_PARAMETERS: ReadonlySet<string> = new Set([
  "model",
  "prompt",
  "best_of",
  "echo",
  "frequency_penalty",
  "logit_bias",
  "logprobs",
  "max_tokens",
  "n",
  "presence_penalty",
  "seed",
  "stop",
  "stream",
  "stream_options",
  "suffix",
  "temperature",
  "top_p",
  "user",
  "top_k",
  "ignore_eos",
  "return_tokens_as_token_ids",
  "return_token_ids",
  "cache_salt",
  "return_weight_versions",
]);

/** OpenAI's message for body fields outside `known` (sorted, as OpenAI lists them), or null when there are none. */
export function unrecognizedArguments(
  body: Record<string, unknown>,
  known: ReadonlySet<string>,
): string | null {
  const unknown = Object.keys(body)
    .filter((key) => !known.has(key))
    .sort();
  if (unknown.length === 0) return null;
  return unknown.length === 1
    ? `Unrecognized request argument supplied: ${unknown[0]}`
    : `Unrecognized request arguments supplied: ${unknown.join(", ")}`;
}
