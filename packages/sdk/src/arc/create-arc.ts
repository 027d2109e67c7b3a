import {
  type ArcLanguageModelMiddleware,
  arcLanguageModelMiddleware,
  type MiddlewareSpecificationVersion,
} from "../ai-sdk/arc-middleware.ts";
import { Exporter, type ExporterStats } from "../export/exporter.ts";
import type { OpenAILike } from "../openai/openai-shapes.ts";
import { wrapOpenAI } from "../openai/wrap-openai.ts";
import { type TraceHandle, type TraceOptions, Tracer } from "../trace/tracer.ts";
import type { WireTrace } from "../wire/wire-types.ts";
import { type ArcOptions, resolveArcOptions } from "./arc-options.ts";
import { type FeedbackInput, feedbackRecord } from "./feedback-record.ts";

/** The agent-side handle on Arc: wraps clients, groups their calls into traces, and ships them in the background. */
export interface Arc {
  /**
   * The client with `chat.completions.create` traced (streaming included); results and errors are exactly those
   * of the unwrapped client. The client passed in is not modified.
   */
  wrapOpenAI<T extends OpenAILike>(client: T): T;
  /**
   * A Vercel AI SDK middleware that traces every call of the models wrapped with it:
   * `wrapLanguageModel({ model, middleware: arc.languageModelMiddleware() })`. Results, streams and errors are
   * the model's own. It declares the middleware specification of `ai` 6 (`v3`); `{ specificationVersion: "v4" }`
   * declares `ai` 7's.
   */
  languageModelMiddleware<V extends MiddlewareSpecificationVersion = "v3">(options?: {
    specificationVersion?: V;
  }): ArcLanguageModelMiddleware<V>;
  /**
   * Runs `fn` as one agent episode: every wrapped call made inside it (across awaits) becomes a step of the same
   * trace. Inside another `trace`, records a nested step instead. Returns what `fn` returns, throws what it throws.
   */
  trace<T>(name: string, fn: (trace: TraceHandle) => T, options?: TraceOptions): T;
  /** Queues a judgement of a trace or step; returns the feedback id. Throws `ArcInputError` on invalid arguments only. */
  feedback(input: FeedbackInput): string;
  /** The id of the trace the caller is inside, if any (to give feedback from deep in the agent). */
  currentTraceId(): string | undefined;
  /** Sends everything queued so far now. Resolves true when all of it is settled, false after `timeoutMs` (default 5000). Never rejects. */
  flush(options?: { timeoutMs?: number }): Promise<boolean>;
  /** Sends traces still waiting for late steps and everything queued, then stops (later traces are dropped). Never rejects. */
  shutdown(options?: { timeoutMs?: number }): Promise<boolean>;
  /** Counters: sent, dropped, failed, retried, pending. */
  stats(): ExporterStats;
}

/**
 * Creates an Arc client. Options fall back to `ARC_URL` and `ARC_API_KEY`; invalid options throw
 * `ArcConfigError` here, once — after that nothing the SDK does throws into the agent.
 *
 * @example
 * const arc = createArc({ baseUrl: "http://localhost:4318", apiKey: process.env.ARC_API_KEY });
 * const openai = arc.wrapOpenAI(new OpenAI());
 * await arc.trace("answer-ticket", async () => openai.chat.completions.create({ model, messages }));
 */
export function createArc(options: ArcOptions = {}): Arc {
  const opts = resolveArcOptions(options, typeof process === "undefined" ? {} : process.env);
  const exporter = opts.enabled ? new Exporter({ ...opts, warn: opts.onWarning }) : undefined;
  const sink = exporter ? (trace: WireTrace) => exporter.enqueueTrace(trace) : () => {};
  const report = (error: unknown) => {
    try {
      opts.onWarning(`[arc] internal error, the agent's call was not affected: ${String(error)}`);
    } catch {
      // Nothing else to tell.
    }
  };
  const tracer = new Tracer(sink, opts.lateStepTimeoutMs, report);
  let stopped = false;
  let exitFlushedThrough = -1;

  const onBeforeExit = () => {
    if (!exporter || stopped) return;
    tracer.emitWaiting();
    if (exporter.stats().pending === 0 || exporter.lastSeq === exitFlushedThrough) return;
    exitFlushedThrough = exporter.lastSeq;
    void exporter.flush(opts.exitFlushTimeoutMs, true);
  };
  const hooked = opts.flushOnExit && exporter !== undefined && typeof process?.on === "function";
  if (hooked) process.on("beforeExit", onBeforeExit);

  return {
    wrapOpenAI: (client) => wrapOpenAI(client, tracer, opts.enabled ? opts.baseUrl : undefined),
    languageModelMiddleware: (middlewareOptions) =>
      arcLanguageModelMiddleware(tracer, middlewareOptions?.specificationVersion),
    trace: (name, fn, traceOptions) => tracer.trace(name, fn, traceOptions),
    feedback(input) {
      const record = feedbackRecord(input);
      exporter?.enqueueFeedback(record);
      return record.id;
    },
    currentTraceId: () => tracer.currentTraceId(),
    flush: async ({ timeoutMs = 5000 } = {}) => (exporter ? exporter.flush(timeoutMs) : true),
    async shutdown({ timeoutMs = 5000 } = {}) {
      if (hooked) process.off("beforeExit", onBeforeExit);
      tracer.emitWaiting();
      stopped = true;
      return exporter ? exporter.shutdown(timeoutMs) : true;
    },
    stats: () => exporter?.stats() ?? { sent: 0, dropped: 0, failed: 0, retried: 0, pending: 0 },
  };
}
