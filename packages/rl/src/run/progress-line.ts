import type { RunState, StepRecord } from "./run-types.ts";

const fmt = (v: number | null | undefined, digits = 3) =>
  v === null || v === undefined ? "-" : v.toFixed(digits);

/** Seconds as `1h02m`, `3m05s` or `42s`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const s = Math.round(seconds);
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${s}s`;
}

/** One progress line: step, loss, reward, accuracy, tokens/s, staleness and ETA (from the mean step time so far). */
export function progressLine(
  record: StepRecord,
  state: RunState,
  firstStepOfSession: number,
  sessionSeconds: number,
): string {
  const done = record.step - firstStepOfSession + 1;
  const eta = done > 0 ? (sessionSeconds / done) * (state.totalSteps - record.step) : Number.NaN;
  const evalPart =
    record.evalFailureRate !== undefined ? ` held-out fail ${fmt(record.evalFailureRate, 2)}` : "";
  return (
    `step ${record.step}/${state.totalSteps} loss ${fmt(record.loss)} reward ${fmt(record.reward)} ` +
    `acc ${fmt(record.accuracy, 2)} ${Math.round(record.tokensPerSecond)} tok/s staleness ${record.staleness}` +
    `${evalPart} ETA ${formatDuration(eta)}`
  );
}
