import { LlmCall } from "../openai/llm-call.ts";
import type { Tracer } from "../trace/tracer.ts";
import { AI_SDK, type AiSdkCall } from "./ai-sdk-step.ts";
import type {
  CallOptionsLike,
  GenerateResultLike,
  LanguageModelLike,
  StreamPartLike,
} from "./language-model-shapes.ts";

/** What the middleware's wrappers are given: the model's own methods, the call's options and the model. */
interface WrapOptions<G, S> {
  doGenerate: () => PromiseLike<G>;
  doStream: () => PromiseLike<S>;
  params: CallOptionsLike;
  model: LanguageModelLike;
}

/**
 * The version of the AI SDK's middleware specification a middleware declares: `v3` for `ai` 6
 * (`LanguageModelV3Middleware`), `v4` for `ai` 7 (`LanguageModelV4Middleware`). Both read calls the same way here.
 */
export type MiddlewareSpecificationVersion = "v3" | "v4";

/** A language-model middleware of the Vercel AI SDK (`LanguageModelV3Middleware` or `V4`), for `wrapLanguageModel`. */
export interface ArcLanguageModelMiddleware<V extends MiddlewareSpecificationVersion = "v3"> {
  readonly specificationVersion: V;
  wrapGenerate<G extends GenerateResultLike, S>(options: WrapOptions<G, S>): Promise<G>;
  wrapStream<G, S extends { stream: ReadableStream<StreamPartLike> }>(options: WrapOptions<G, S>): Promise<S>;
}

/** A traced call of the model, begun now; tracing failures are reported to the tracer, never thrown. */
function begin(tracer: Tracer, call: AiSdkCall): LlmCall | undefined {
  try {
    return new LlmCall(tracer, call, AI_SDK);
  } catch (error) {
    tracer.report(error);
    return undefined;
  }
}

/**
 * The stream as the caller reads it, part by part and unchanged, with the call's step ended once: with the
 * assembled result when it ends, the error when it fails (an `error` part, or a failed read), or what was read
 * when the caller cancels it.
 */
function observed(stream: ReadableStream<StreamPartLike>, call: LlmCall): ReadableStream<StreamPartLike> {
  const reader = stream.getReader();
  const acc = AI_SDK.accumulator();
  let error: unknown;
  return new ReadableStream<StreamPartLike>({
    async pull(controller) {
      let next: ReadableStreamReadResult<StreamPartLike>;
      try {
        next = await reader.read();
      } catch (readError) {
        call.fail(readError, acc.result());
        throw readError;
      }
      if (next.done) {
        if (error !== undefined) call.fail(error, acc.result());
        else call.succeed(acc.result());
        controller.close();
        return;
      }
      acc.add(next.value);
      if (next.value.type === "error") error = next.value.error;
      controller.enqueue(next.value);
    },
    cancel(reason) {
      call.succeed(acc.result(), { streamClosedEarly: true });
      return reader.cancel(reason);
    },
  });
}

/**
 * Traces every call of a model wrapped with it (`wrapLanguageModel({ model, middleware })`, as `generateText`,
 * `streamText` and agents make them) as an `llm` step of the current trace: the prompt as OpenAI chat messages
 * (tool calls, tool results, images), the tools offered, the answer's text and tool calls, the finish reason and
 * usage. Results, streams and errors reach the caller unchanged.
 */
export function arcLanguageModelMiddleware<V extends MiddlewareSpecificationVersion = "v3">(
  tracer: Tracer,
  specificationVersion: V = "v3" as V,
): ArcLanguageModelMiddleware<V> {
  return {
    specificationVersion,
    async wrapGenerate<G extends GenerateResultLike, S>({ doGenerate, params, model }: WrapOptions<G, S>) {
      const call = begin(tracer, { operation: "doGenerate", model, params });
      let result: G;
      try {
        result = await doGenerate();
      } catch (error) {
        call?.fail(error);
        throw error;
      }
      call?.succeed(result);
      return result;
    },
    async wrapStream<G, S extends { stream: ReadableStream<StreamPartLike> }>({
      doStream,
      params,
      model,
    }: WrapOptions<G, S>) {
      const call = begin(tracer, { operation: "doStream", model, params });
      let result: S;
      try {
        result = await doStream();
      } catch (error) {
        call?.fail(error);
        throw error;
      }
      return call ? { ...result, stream: observed(result.stream, call) } : result;
    },
  };
}
