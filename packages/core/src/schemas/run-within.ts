import { createContext, Script } from "node:vm";
import { ArcError } from "../errors/index.ts";

/** Work that ran past its deadline and was stopped there. */
export class DeadlineExceededError extends ArcError {
  constructor(readonly ms: number) {
    super(`took more than ${ms} ms`, { name: "DeadlineExceededError", statusCode: 400 });
  }
}

const context = createContext({ work: undefined as (() => unknown) | undefined });
const script = new Script("work()");

/**
 * Runs synchronous `work` and stops it once it has run `ms` milliseconds (V8 terminates it wherever it is: in a
 * generated validator, in a native regex), throwing a DeadlineExceededError. It runs on the calling thread, so a
 * bounded piece of work needs no worker; state the work was changing when stopped must not be used again.
 */
export function runWithin<T>(ms: number, work: () => T): T {
  const limit = Math.max(1, Math.floor(ms));
  context.work = work;
  try {
    return script.runInContext(context, { timeout: limit }) as T;
  } catch (error) {
    if ((error as { code?: unknown })?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT")
      throw new DeadlineExceededError(limit);
    throw error;
  } finally {
    context.work = undefined;
  }
}

/** Time left to a piece of work that runs as several bounded parts (e.g. every schema check of one trace). */
export class TimeBudget {
  private readonly end: number;
  constructor(readonly ms: number) {
    this.end = performance.now() + ms;
  }

  /** Milliseconds left, 0 once spent. */
  left(): number {
    return Math.max(0, this.end - performance.now());
  }
}
