import type { WireStep, WireTrace } from "../wire/wire-types.ts";

/** What a trace needs from the tracer that owns it. */
export interface TraceStateHooks {
  /** Hands a finished trace (or a follow-up carrying late steps) to the exporter. */
  emit(trace: WireTrace): void;
  /** Called when the trace starts or stops waiting for steps still running after its function returned. */
  waiting(state: TraceState, isWaiting: boolean): void;
  /** How long to wait for such steps before sending the trace without them. */
  lateStepTimeoutMs: number;
}

/**
 * One open episode: collects its steps as they finish and sends the trace once its function has returned and
 * no step started inside it is still running (a stream the caller reads after returning, for instance).
 * A step that finishes after the trace was sent goes out as a follow-up with the same trace id; the server
 * merges records by id, so nothing is duplicated.
 */
export class TraceState {
  private readonly steps: WireStep[] = [];
  private running = 0;
  private ended = false;
  private emitted = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    /** The trace's own fields; mutable until it is sent (`TraceHandle.update` writes here). */
    readonly record: WireTrace,
    private readonly hooks: TraceStateHooks,
  ) {}

  /** A step began inside this trace. */
  stepStarted(): void {
    this.running++;
  }

  /** A step that began inside this trace finished. */
  stepEnded(step: WireStep): void {
    this.running = Math.max(0, this.running - 1);
    if (this.emitted) {
      const { id, name, startedAt } = this.record;
      this.hooks.emit({ id, name, startedAt, steps: [step] });
      return;
    }
    this.steps.push(step);
    if (this.ended && this.running === 0) this.emit();
  }

  /** The trace's function returned or threw. */
  end(): void {
    this.ended = true;
    if (this.running === 0) {
      this.emit();
      return;
    }
    this.hooks.waiting(this, true);
    this.timer = setTimeout(() => this.emit(), this.hooks.lateStepTimeoutMs);
    this.timer.unref?.();
  }

  /** Sends the trace now with the steps finished so far (at shutdown, exit, or when waiting timed out). */
  emit(): void {
    if (this.emitted) return;
    this.emitted = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.hooks.waiting(this, false);
    }
    if (this.running > 0) this.record.metadata = { ...this.record.metadata, stepsStillRunning: this.running };
    this.record.steps = this.steps;
    this.hooks.emit(this.record);
  }
}
