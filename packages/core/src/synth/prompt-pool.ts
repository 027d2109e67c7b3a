import { InvalidInputError } from "../errors/index.ts";
import type { DatasetRow } from "../tasks/index.ts";
import { createDataset, type Dataset, type PromptRow, questionsOf, sha256 } from "./dataset.ts";
import type { FailureItem } from "./failure-item.ts";
import { duplicateKey, NearDuplicateIndex } from "./near-duplicate-index.ts";
import { seededShuffle } from "./seeded-shuffle.ts";

/** How a PromptPool's failure share is filled: see `PromptPoolOptions.failureSampling`. */
export type FailureSampling = "balanced" | "proportional";

/** Inputs of a PromptPool. */
export interface PromptPoolOptions {
  tenantId: string;
  seed: number;
  /** Failed production traces; those without a reference solution become reference-free rows (a judge rewards them). */
  failures: readonly FailureItem[];
  /** General rows to replay so the model keeps what it could do (e.g. the `train` split). */
  replay: readonly DatasetRow[];
  /** Prompts in the pool. */
  size: number;
  /** Share of the pool drawn from failures (default 0.8); the rest is general replay. */
  failureSamplingRatio?: number;
  /**
   * How the failure share is filled (default `balanced`): `balanced` takes each pattern in turn, cycling its
   * distinct prompts, so rare patterns are not drowned (a pattern of 5 prompts gets as many rows as one of 100, for
   * RL pools); `proportional` takes the distinct failed prompts as the traffic had them, each once before any
   * repeats (for supervised warm-ups, which memorize a prompt seen many times).
   */
  failureSampling?: FailureSampling;
  /** The tenant's EvalSets: no prompt within `nearDuplicateThreshold` of their questions enters the pool. */
  evalSets: readonly Dataset[];
  /** Default 0.8 (word unigram+bigram Jaccard). */
  nearDuplicateThreshold?: number;
}

/**
 * Builds a PromptPool: `round(size × failureSamplingRatio)` failure prompts, balanced across patterns (each
 * pattern in turn, its distinct prompts cycled in a seeded order, so rare patterns are not drowned) or in the
 * traffic's proportions (`failureSampling`), and the rest general replay; eval questions and their near-duplicates
 * never enter. Deterministic for a seed.
 */
export function buildPromptPool(options: PromptPoolOptions): Dataset<"prompts"> {
  const ratio = options.failureSamplingRatio ?? 0.8;
  if (!(ratio >= 0 && ratio <= 1)) {
    throw new InvalidInputError(`failureSamplingRatio: expected a number in [0, 1], got ${ratio}`, {
      field: "failureSamplingRatio",
    });
  }
  if (!Number.isInteger(options.size) || options.size < 0) {
    throw new InvalidInputError(`size: expected a non-negative integer, got ${options.size}`, {
      field: "size",
    });
  }
  const sampling = options.failureSampling ?? "balanced";
  if (sampling !== "balanced" && sampling !== "proportional") {
    throw new InvalidInputError(
      `failureSampling: expected "balanced" or "proportional", got ${JSON.stringify(sampling)}`,
      {
        field: "failureSampling",
      },
    );
  }
  const threshold = options.nearDuplicateThreshold ?? 0.8;
  const held = NearDuplicateIndex.of(options.evalSets.flatMap(questionsOf), threshold);
  const stats = { referenceFree: 0, overlapsEval: 0, duplicatePrompts: 0 };

  const byPattern = new Map<string, PromptRow[]>();
  const byKey = new Map<string, PromptRow>();
  for (const f of options.failures) {
    if (held.find(f.question) !== undefined) {
      stats.overlapsEval++;
      continue;
    }
    const key = `${f.env ?? ""}|${duplicateKey(f.question)}`;
    const known = byKey.get(key);
    if (known) {
      known.meta.sourceTraceIds.push(f.traceId);
      stats.duplicatePrompts++;
      continue;
    }
    const row: PromptRow = {
      id: `pp-${sha256(key).slice(0, 16)}`,
      question: f.question,
      ...(f.solution === undefined ? {} : { solution: f.solution }),
      ...(f.env ? { env: f.env } : {}),
      context: f.context,
      meta: { source: "failure", patternId: f.patternId, sourceTraceIds: [f.traceId] },
    };
    if (f.solution === undefined) stats.referenceFree++;
    byKey.set(key, row);
    byPattern.set(f.patternId, [...(byPattern.get(f.patternId) ?? []), row]);
  }
  const replay = seededShuffle(
    options.replay.filter((r) => held.find(r.question) === undefined),
    options.seed ^ 0x5eed,
  );
  stats.overlapsEval += options.replay.length - replay.length;

  const patternIds = [...byPattern.keys()].sort();
  const nFailure = patternIds.length ? Math.round(options.size * ratio) : 0;
  const nReplay = replay.length ? options.size - nFailure : 0;
  const rows: PromptRow[] = [];
  const queues =
    sampling === "balanced"
      ? patternIds.map((id, i) => seededShuffle(byPattern.get(id) ?? [], options.seed + i))
      : [seededShuffle([...byKey.values()], options.seed)];
  for (let i = 0; i < nFailure; i++) {
    const queue = queues[i % queues.length];
    const round = Math.floor(i / queues.length);
    rows.push(structuredClone(queue[round % queue.length]));
  }
  for (let i = 0; i < nReplay; i++) {
    const r = replay[i % replay.length];
    const sourceId = typeof r.meta.id === "string" ? r.meta.id : undefined;
    rows.push({
      id: `pp-${sha256(`${r.env}|${duplicateKey(r.question)}`).slice(0, 16)}`,
      question: r.question,
      solution: r.solution,
      env: r.env,
      meta: { source: "replay", sourceTraceIds: [], sourceId },
    });
  }
  for (const row of rows) row.meta.sourceTraceIds.sort();
  return createDataset(
    "prompts",
    options.tenantId,
    seededShuffle(rows, options.seed),
    {
      seed: options.seed,
      patternIds,
      params: {
        size: options.size,
        failureSamplingRatio: ratio,
        failureSampling: sampling,
        nearDuplicateThreshold: threshold,
      },
    },
    { ...stats, failureRows: nFailure, replayRows: nReplay, distinctFailurePrompts: byKey.size },
  );
}
