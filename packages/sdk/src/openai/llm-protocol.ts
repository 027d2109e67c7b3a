import type { WireStep } from "../wire/wire-types.ts";
import { llmRequestStep, recordCompletion } from "./llm-step.ts";
import type { ChatCompletionChunkLike, ChatCompletionLike, ChatRequestLike } from "./openai-shapes.ts";
import {
  type ResponseLike,
  ResponseStreamAccumulator,
  type ResponseStreamEventLike,
  recordResponse,
  responsesRequestStep,
} from "./responses-step.ts";
import { StreamAccumulator } from "./stream-accumulator.ts";

/** How one OpenAI endpoint's request, response and stream become an `llm` step. */
export interface LlmProtocol {
  /** The request side of the step, taken when the call is made. */
  requestStep(body: unknown): WireStep;
  /** Fills the response side from a response body (or what a stream assembled). */
  record(step: WireStep, response: unknown): void;
  /** Folds a stream's chunks or events into a response body. */
  accumulator(): { add(chunk: unknown): void; result(): unknown };
}

/** `chat.completions.create`. */
export const CHAT_COMPLETIONS: LlmProtocol = {
  requestStep: (body) => llmRequestStep(body as ChatRequestLike | undefined),
  record: (step, response) => recordCompletion(step, response as ChatCompletionLike),
  accumulator: () => {
    const acc = new StreamAccumulator();
    return { add: (chunk) => acc.add(chunk as ChatCompletionChunkLike), result: () => acc.result() };
  },
};

/** `responses.create` (the Responses API). */
export const RESPONSES: LlmProtocol = {
  requestStep: (body) => responsesRequestStep(body as Record<string, unknown> | undefined),
  record: (step, response) => recordResponse(step, response as ResponseLike),
  accumulator: () => {
    const acc = new ResponseStreamAccumulator();
    return { add: (event) => acc.add(event as ResponseStreamEventLike), result: () => acc.result() };
  },
};
