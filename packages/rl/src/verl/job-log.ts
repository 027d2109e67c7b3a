import type { Recipe } from "../recipe/recipe-schema.ts";
import type { StepRecord } from "../run/run-types.ts";

/** The prefix of the line `arc train --json-steps` prints for each step record (a Ray job's log carries it). */
export const ARC_STEP_PREFIX = "arc-step ";

/** ANSI colour codes in a job's log. */
const COLOUR = /\x1b\[[0-9;]*m/g;
/** The `(TaskRunner pid=N, ip=…)` prefix Ray puts before an actor's lines in a job's log. */
const ACTOR_PREFIX = /^\s*\([A-Za-z0-9_]+ pid=\d+(?:, ip=[\d.]+)?\)\s*/;

/** A metric value as VERL's console logger prints it (`0.25`, `1e-07`, `True`, `nan`, `np.float64(0.25)`). */
function metricValue(text: string): number | undefined {
  const bare = /^np\.(?:float|int)\d*\((.*)\)$/.exec(text)?.[1] ?? text;
  if (bare === "True") return 1;
  if (bare === "False") return 0;
  const value = Number(bare);
  return Number.isFinite(value) ? value : undefined;
}

/** A VERL console line (`step:3 - actor/pg_loss:np.float64(0.1) - critic/score/mean:0.6`): its step and metrics. */
export function parseVerlMetricsLine(line: string): { step: number; metrics: Record<string, number> } | null {
  const match = /^step:(\d+)(?: - (.*))?$/.exec(line.replace(COLOUR, "").replace(ACTOR_PREFIX, "").trim());
  if (!match) return null;
  const metrics: Record<string, number> = {};
  for (const field of (match[2] ?? "").split(" - ")) {
    const colon = field.indexOf(":");
    if (colon <= 0) continue;
    const value = metricValue(field.slice(colon + 1).trim());
    if (value !== undefined) metrics[field.slice(0, colon).trim()] = value;
  }
  return { step: Number(match[1]), metrics };
}

/** The first metric whose name matches. */
const pick = (metrics: Record<string, number>, pattern: RegExp) =>
  Object.entries(metrics).find(([name]) => pattern.test(name))?.[1];

/**
 * A VERL step's metrics as Arc's step record: loss `actor/pg_loss`, reward `critic/score/mean`, accuracy the mean of
 * Arc's `passed` (its reward module's), held-out figures from `val-core/…/passed/mean@N`, the learning rate, gradient
 * norm and throughput; every metric kept in `extra`. Step 0 is VERL's validation before training.
 */
export function verlStepRecord(step: number, metrics: Record<string, number>): StepRecord {
  const heldOut = pick(metrics, /^val-core\/.+\/passed\/mean@\d+$/);
  const passed = pick(metrics, /(^|\/)passed\/mean$/);
  return {
    step,
    algorithm: "grpo",
    loss: metrics["actor/pg_loss"] ?? null,
    reward: metrics["critic/score/mean"] ?? null,
    accuracy: passed ?? null,
    advantageMean: metrics["critic/advantages/mean"] ?? null,
    advantageStd: null,
    used: 0,
    skipped: 0,
    gradNorm: metrics["actor/grad_norm"] ?? null,
    learningRate: metrics["actor/lr"] ?? null,
    tokens: 0,
    tokensPerSecond: metrics["perf/throughput"] ?? 0,
    staleness: 0,
    generatorStep: Math.max(0, step - 1),
    ...(heldOut === undefined ? {} : { evalAccuracy: heldOut, evalFailureRate: 1 - heldOut }),
    elapsedS: metrics["timing_s/step"] ?? 0,
    extra: metrics,
  };
}

/**
 * The step records in a job's log lines, in order: `arc train --json-steps` lines of Arc's trainer, or VERL's console
 * metric lines (`trainer.backend` says which). Other lines are ignored.
 */
export function stepRecordsInLog(
  lines: readonly string[],
  backend: Recipe["trainer"]["backend"],
): StepRecord[] {
  const records: StepRecord[] = [];
  for (const line of lines) {
    if (backend === "arc") {
      const at = line.indexOf(ARC_STEP_PREFIX);
      if (at < 0) continue;
      try {
        records.push(JSON.parse(line.slice(at + ARC_STEP_PREFIX.length)) as StepRecord);
      } catch {
        // another program's line that happens to hold the prefix: not a step record
      }
      continue;
    }
    const parsed = parseVerlMetricsLine(line);
    if (parsed) records.push(verlStepRecord(parsed.step, parsed.metrics));
  }
  return records;
}
