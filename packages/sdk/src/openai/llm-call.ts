import { isoNow } from "../trace/iso-now.ts";
import { toStepError } from "../trace/step-error.ts";
import type { StepScope, Tracer } from "../trace/tracer.ts";
import { CHAT_COMPLETIONS, type LlmProtocol } from "./llm-protocol.ts";

type IteratorFactory = (this: unknown, ...args: unknown[]) => AsyncIterator<unknown>;

/**
 * One traced `chat.completions.create` or `responses.create` call (its `protocol`): begins its `llm` step when the call is made and ends it once,
 * with the completion (non-streamed, or assembled from the stream as the caller reads it) or with the error the
 * caller got. Every method swallows its own failures (reported to the tracer): tracing never breaks a call.
 */
export class LlmCall {
  /** Set when the openai client starts parsing the response (so `asResponse` knows it need not). */
  parseStarted = false;
  private readonly scope: StepScope;
  private readonly started = performance.now();
  private readonly streaming: boolean;
  /** `x-arc-model-version` of the response, when Arc's gateway answered. */
  private arcModelVersion: string | undefined;

  constructor(
    private readonly tracer: Tracer,
    body: object | undefined,
    private readonly protocol: LlmProtocol = CHAT_COMPLETIONS,
  ) {
    const scope = tracer.beginStep(protocol.requestStep(body));
    this.scope = {
      step: scope.step,
      traceId: scope.traceId,
      end: (patch) => {
        // Arc's gateway names the model version that answered; it beats the provider's system_fingerprint
        if (this.arcModelVersion && scope.step.llm) scope.step.llm.modelVersion = this.arcModelVersion;
        scope.end(patch);
      },
    };
    this.streaming = (body as { stream?: unknown } | undefined)?.stream === true;
  }

  /** Headers that tell Arc's gateway which trace and step this call is, so it records its own copy there. */
  correlationHeaders(): Record<string, string> {
    const { step, traceId } = this.scope;
    return {
      "x-arc-trace-id": traceId,
      "x-arc-step-id": step.id,
      ...(step.parentId ? { "x-arc-parent-step-id": step.parentId } : {}),
    };
  }

  /**
   * The call produced `data`: a completion, or (when streaming) a stream to observe as it is read; `metadata` is
   * added to the step.
   */
  succeed(data: unknown, metadata?: Record<string, unknown>): void {
    this.safely(() => {
      if (this.streaming && typeof data === "object" && data !== null) this.observeStream(data);
      else this.end(data, metadata);
    });
  }

  /**
   * Notes the request id (and Arc's model version) headers of the response the client is about to parse (`props.response` of openai's
   * parse step); for a stream it is the only place it can be read.
   */
  noteResponse(props: unknown): void {
    this.safely(() => {
      const headers = (
        props as { response?: { headers?: { get?: (name: string) => string | null } } } | undefined
      )?.response?.headers;
      const requestId = typeof headers?.get === "function" ? headers.get("x-request-id") : null;
      const arcModelVersion = typeof headers?.get === "function" ? headers.get("x-arc-model-version") : null;
      if (arcModelVersion) this.arcModelVersion = arcModelVersion;
      if (requestId) this.scope.step.metadata = { ...this.scope.step.metadata, requestId };
    });
  }

  /** The call failed with `error` (re-thrown to the caller unchanged by the wrapper). */
  fail(error: unknown, partial?: unknown): void {
    this.safely(() => {
      if (partial) this.protocol.record(this.scope.step, partial);
      this.scope.end({ ...this.timing(), error: toStepError(error) });
    });
  }

  /**
   * The caller took the raw `Response` (`asResponse()`), so the client never parses it. A non-streamed JSON body
   * is read from a clone; a stream's output is not captured (reading a copy would keep the request open after
   * the caller stops reading).
   */
  rawResponse(response: { status?: number; clone?: () => { json(): Promise<unknown> } }): void {
    this.safely(() => {
      const metadata = { rawResponse: true, httpStatus: response.status };
      if (this.streaming || typeof response.clone !== "function") {
        this.scope.end({
          ...this.timing(),
          metadata: { ...metadata, outputNotCaptured: "streamed raw response" },
        });
        return;
      }
      response
        .clone()
        .json()
        .then(
          (json) => this.end(json, metadata),
          () =>
            this.scope.end({
              ...this.timing(),
              metadata: { ...metadata, outputNotCaptured: "unreadable body" },
            }),
        );
    });
  }

  private end(response: unknown, metadata?: Record<string, unknown>): void {
    this.safely(() => {
      const step = this.scope.step;
      if (metadata) step.metadata = { ...step.metadata, ...metadata };
      if (response && typeof response === "object") this.protocol.record(step, response);
      this.scope.end(this.timing());
    });
  }

  /**
   * Reads the chunks as the caller iterates the very same stream object: its iterator factory (`iterator` on
   * the openai `Stream`, which `for await`, `tee()` and `toReadableStream()` all use, else
   * `Symbol.asyncIterator`) is replaced on the instance by one that forwards every call and result unchanged.
   */
  private observeStream(stream: object): void {
    const s = stream as Record<PropertyKey, unknown>;
    const key = typeof s.iterator === "function" ? "iterator" : Symbol.asyncIterator;
    const factory = s[key] as IteratorFactory | undefined;
    if (typeof factory !== "function") {
      this.end(undefined);
      return;
    }
    const call = this;
    const acc = this.protocol.accumulator();
    let firstChunkMs: number | undefined;
    const finish = (metadata: Record<string, unknown>) => {
      if (firstChunkMs !== undefined) metadata.timeToFirstChunkMs = firstChunkMs;
      call.end(acc.result(), metadata);
    };
    Object.defineProperty(stream, key, {
      configurable: true,
      writable: true,
      value: function (this: unknown, ...args: unknown[]): AsyncIterator<unknown> {
        const inner = factory.apply(this, args);
        const observed: AsyncIterator<unknown> & AsyncIterable<unknown> = {
          next: (...nextArgs: [] | [unknown]) =>
            inner.next(...nextArgs).then(
              (result) => {
                call.safely(() => {
                  if (result.done) return finish({});
                  firstChunkMs ??= performance.now() - call.started;
                  acc.add(result.value);
                });
                return result;
              },
              (error) => {
                call.fail(error, acc.result());
                throw error;
              },
            ),
          return: (value?: unknown) => {
            call.safely(() => finish({ streamClosedEarly: true }));
            return inner.return ? inner.return(value) : Promise.resolve({ done: true, value });
          },
          [Symbol.asyncIterator]() {
            return observed;
          },
        };
        if (inner.throw) observed.throw = (error?: unknown) => inner.throw!(error);
        return observed;
      },
    });
  }

  private timing(): { endedAt: string; latencyMs: number } {
    return { endedAt: isoNow(), latencyMs: performance.now() - this.started };
  }

  private safely(body: () => void): void {
    try {
      body();
    } catch (error) {
      this.tracer.report(error);
    }
  }
}
