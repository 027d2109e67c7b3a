import { AsyncLocalStorage } from "node:async_hooks";
import type { WireStep, WireStepKind, WireTrace } from "../wire/wire-types.ts";
import { isoNow } from "./iso-now.ts";
import { randomId } from "./random-id.ts";
import { toStepError } from "./step-error.ts";
import { TraceState } from "./trace-state.ts";

/** Options of `arc.trace(name, fn, options)`. */
export interface TraceOptions {
  /** Who the episode served; canary routing and feedback key on it. */
  userId?: string;
  /** Groups the episodes of one conversation. */
  sessionId?: string;
  /** The task environment of the episode (its task family's env id), which selects its verifier on the server. */
  env?: string;
  /** Free labels to filter on (at most 64, each at most 128 characters; longer ones are cut). */
  tags?: string[];
  /** Anything JSON-serializable you want kept with the trace (or with the step, for a nested trace). */
  metadata?: Record<string, unknown>;
  /** What the episode was asked to do, recorded as the trace's (or nested step's) `input`. */
  input?: unknown;
  /** Record `fn`'s return value as `output` (default true). Turn off for large or sensitive results. */
  captureOutput?: boolean;
  /** The kind of step a nested trace is recorded as (default `custom`); ignored for a top-level trace. */
  kind?: Exclude<WireStepKind, "llm">;
}

/** Fields `TraceHandle.update` may change while the episode runs. */
export interface TraceUpdate {
  output?: unknown;
  metadata?: Record<string, unknown>;
  userId?: string;
  sessionId?: string;
  env?: string;
  tags?: string[];
}

/** Given to the function of `arc.trace`: the ids to attach feedback to, and a way to add what is learnt late. */
export interface TraceHandle {
  /** The id of the episode (the top-level trace), to pass to `arc.feedback`. */
  readonly traceId: string;
  /** The id of the step a nested trace is recorded as; undefined for a top-level trace. */
  readonly stepId: string | undefined;
  /** Sets the output (instead of the return value), merges metadata, sets user/session/env, adds tags. */
  update(patch: TraceUpdate): void;
}

/** A step that has begun; `end` records it (once; later calls are ignored). */
export interface StepScope {
  /** The step record so far; `end` completes it. */
  readonly step: WireStep;
  /** The id of the trace the step will be sent in (its own trace's, outside any episode). */
  readonly traceId: string;
  end(patch: Partial<WireStep>): void;
}

interface TraceContext {
  state: TraceState;
  /** The nested trace's step that new steps belong to. */
  parentStepId?: string;
}

const MAX_NAME = 512;

function clip(value: unknown, max: number): string | undefined {
  return value === undefined || value === null ? undefined : String(value).slice(0, max);
}

function clipTags(tags: unknown): string[] | undefined {
  if (!Array.isArray(tags)) return undefined;
  return tags.slice(0, 64).map((t) => String(t).slice(0, 128));
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/**
 * Runs `fn` and calls `done` with its outcome, returning exactly what `fn` returned (or a promise of the same
 * value when it returned a thenable) and re-throwing exactly what it threw.
 */
function observe<T>(fn: () => T, done: (failed: boolean, valueOrError: unknown) => void): T {
  let result: T;
  try {
    result = fn();
  } catch (error) {
    done(true, error);
    throw error;
  }
  if (!isThenable(result)) {
    done(false, result);
    return result;
  }
  return result.then(
    (value) => {
      done(false, value);
      return value;
    },
    (error) => {
      done(true, error);
      throw error;
    },
  ) as T;
}

/** Runs `body`, reporting (never throwing) anything that goes wrong in the SDK's own bookkeeping. */
function safely(report: (error: unknown) => void, body: () => void): void {
  try {
    body();
  } catch (error) {
    report(error);
  }
}

/**
 * Groups the steps made inside `trace(name, fn)` into one episode, through `AsyncLocalStorage`: every step
 * started in `fn`'s asynchronous call tree joins its trace; a nested `trace` becomes a step whose children point
 * to it with `parentId`; a step made outside any trace is sent as a trace of its own.
 */
export class Tracer {
  private readonly storage = new AsyncLocalStorage<TraceContext>();
  private readonly waiting = new Set<TraceState>();

  constructor(
    private readonly sink: (trace: WireTrace) => void,
    private readonly lateStepTimeoutMs: number,
    /** Receives the SDK's own errors, which are never thrown into the agent. */
    readonly report: (error: unknown) => void,
  ) {}

  /** The id of the episode the caller is in, if any. */
  currentTraceId(): string | undefined {
    return this.storage.getStore()?.state.record.id;
  }

  /** Starts a step in the caller's trace (or, outside any trace, one that will be sent as its own trace). */
  beginStep(step: WireStep): StepScope {
    const context = this.storage.getStore();
    if (context?.parentStepId) step.parentId = context.parentStepId;
    context?.state.stepStarted();
    const traceId = context?.state.record.id ?? randomId();
    let ended = false;
    return {
      step,
      traceId,
      end: (patch) => {
        if (ended) return;
        ended = true;
        safely(this.report, () => {
          Object.assign(step, patch);
          if (context) context.state.stepEnded(step);
          else
            this.sink({
              id: traceId,
              name: step.name,
              startedAt: step.startedAt,
              endedAt: step.endedAt,
              status: step.error ? "error" : "ok",
              steps: [step],
            });
        });
      },
    };
  }

  /** Runs `fn` as an episode (or, inside one, as a nested step); see `Arc.trace`. */
  trace<T>(name: string, fn: (handle: TraceHandle) => T, options: TraceOptions = {}): T {
    const parent = this.storage.getStore();
    return parent ? this.nested(parent, name, fn, options) : this.root(name, fn, options);
  }

  /** Sends every trace still waiting for late steps, with what it has (at shutdown and process exit). */
  emitWaiting(): void {
    for (const state of [...this.waiting]) safely(this.report, () => state.emit());
  }

  private root<T>(name: string, fn: (handle: TraceHandle) => T, options: TraceOptions): T {
    const record: WireTrace = {
      id: randomId(),
      name: clip(name, MAX_NAME),
      startedAt: isoNow(),
      steps: [],
    };
    let outputSet = false;
    const state = new TraceState(record, {
      emit: this.sink,
      lateStepTimeoutMs: this.lateStepTimeoutMs,
      waiting: (s, isWaiting) => (isWaiting ? this.waiting.add(s) : this.waiting.delete(s)),
    });
    const handle: TraceHandle = {
      traceId: record.id,
      stepId: undefined,
      update: (patch) =>
        safely(this.report, () => {
          if ("output" in patch) {
            record.output = patch.output;
            outputSet = true;
          }
          this.updateRoot(record, patch);
          if (isPlainRecord(patch.metadata)) record.metadata = { ...record.metadata, ...patch.metadata };
        }),
    };
    safely(this.report, () => {
      if (options.input !== undefined) record.input = options.input;
      if (isPlainRecord(options.metadata)) record.metadata = { ...options.metadata };
      this.updateRoot(record, options);
    });
    return observe(
      () => this.storage.run({ state }, fn, handle),
      (failed, valueOrError) =>
        safely(this.report, () => {
          record.endedAt = isoNow();
          record.status = failed ? "error" : "ok";
          if (failed) record.metadata = { ...record.metadata, error: toStepError(valueOrError) };
          else if (!outputSet && options.captureOutput !== false && valueOrError !== undefined)
            record.output = valueOrError;
          state.end();
        }),
    );
  }

  private nested<T>(
    parent: TraceContext,
    name: string,
    fn: (handle: TraceHandle) => T,
    options: TraceOptions,
  ): T {
    const started = performance.now();
    const scope = this.beginStep({
      id: randomId(),
      kind: options.kind ?? "custom",
      name: clip(name, MAX_NAME),
      startedAt: isoNow(),
    });
    const step = scope.step;
    let outputSet = false;
    const handle: TraceHandle = {
      traceId: parent.state.record.id,
      stepId: step.id,
      update: (patch) =>
        safely(this.report, () => {
          if ("output" in patch) {
            step.output = patch.output;
            outputSet = true;
          }
          if (isPlainRecord(patch.metadata)) step.metadata = { ...step.metadata, ...patch.metadata };
          this.updateRoot(parent.state.record, patch);
        }),
    };
    safely(this.report, () => {
      if (options.input !== undefined) step.input = options.input;
      if (isPlainRecord(options.metadata)) step.metadata = { ...options.metadata };
      this.updateRoot(parent.state.record, options);
    });
    return observe(
      () => this.storage.run({ state: parent.state, parentStepId: step.id }, fn, handle),
      (failed, valueOrError) => {
        const patch: Partial<WireStep> = {
          endedAt: isoNow(),
          latencyMs: performance.now() - started,
        };
        if (failed) patch.error = toStepError(valueOrError);
        else if (!outputSet && options.captureOutput !== false && valueOrError !== undefined)
          patch.output = valueOrError;
        scope.end(patch);
      },
    );
  }

  /** Writes user, session, env and tags onto the episode (last write wins; tags accumulate). */
  private updateRoot(record: WireTrace, fields: TraceUpdate | TraceOptions): void {
    const userId = clip(fields.userId, 256);
    const sessionId = clip(fields.sessionId, 256);
    const env = clip(fields.env, 128);
    if (userId !== undefined) record.userId = userId;
    if (sessionId !== undefined) record.sessionId = sessionId;
    if (env !== undefined) record.env = env;
    const tags = clipTags(fields.tags);
    if (tags) record.tags = [...new Set([...(record.tags ?? []), ...tags])].slice(0, 64);
  }
}
