import { InvalidInputError } from "../../errors/index.ts";
import type { ChatCompletion, ChatModel, CompleteOptions, TeachMessage } from "./chat-model.ts";

/** The protocol's phases: the baseline is the same student without guidance, for evaluation and reward. */
export type TeachingPhase = "probe" | "teaching" | "solution" | "baseline";

/** One model call of the protocol, as a caller stores it (one trace step per record). */
export interface TeachingPhaseRecord {
  /** Which step of the protocol this call was. */
  phase: TeachingPhase;
  /** Which model answered. */
  role: "student" | "teacher";
  /** The model's name, when the ChatModel gives one. */
  model?: string;
  /** Exactly what the model was sent. */
  messages: TeachMessage[];
  /** The raw output, before any parsing or truncation. */
  output: string;
  /** Prompt tokens as the backend counted them. */
  promptTokens: number;
  /** Generated tokens as the backend counted them. */
  completionTokens: number;
  /** Why generation ended, when the backend says. */
  finishReason?: ChatCompletion["finishReason"];
  /** The output's log-probabilities in OpenAI's shape, when the call asked for them. */
  logprobs?: unknown;
  /** ISO 8601 time the call started. */
  startedAt: string;
  /** Wall time of the call in milliseconds. */
  latencyMs: number;
  /** The token budget the call was given. */
  maxTokens: number;
  /** The sampling temperature the call was given. */
  temperature: number;
}

function checkCompletion(result: ChatCompletion, role: string): void {
  const where = `${role}.complete()`;
  if (typeof result?.text !== "string")
    throw new InvalidInputError(`${where} returned text ${typeof result?.text}; expected a string`, {
      field: `${where}.text`,
    });
  for (const key of ["promptTokens", "completionTokens"] as const)
    if (!Number.isInteger(result[key]) || result[key] < 0)
      throw new InvalidInputError(
        `${where} returned ${key} ${result[key]}; expected a non-negative integer`,
        {
          field: `${where}.${key}`,
        },
      );
}

/** Calls a model for one phase, times it, checks the result's shape and returns the record. */
export async function callPhase(
  phase: TeachingPhase,
  role: "student" | "teacher",
  model: ChatModel,
  messages: TeachMessage[],
  options: CompleteOptions,
): Promise<TeachingPhaseRecord> {
  const startedAt = new Date().toISOString();
  const start = performance.now();
  const result = await model.complete(messages, options);
  const latencyMs = performance.now() - start;
  checkCompletion(result, role);
  return {
    phase,
    role,
    ...(model.model === undefined ? {} : { model: model.model }),
    messages,
    output: result.text,
    promptTokens: result.promptTokens,
    completionTokens: result.completionTokens,
    ...(result.finishReason === undefined ? {} : { finishReason: result.finishReason }),
    ...(result.logprobs === undefined ? {} : { logprobs: result.logprobs }),
    startedAt,
    latencyMs,
    maxTokens: options.maxTokens,
    temperature: options.temperature,
  };
}
