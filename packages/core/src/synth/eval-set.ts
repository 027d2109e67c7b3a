import type { DatasetRow } from "../tasks/index.ts";
import { createDataset, type Dataset, type EvalRow, sha256 } from "./dataset.ts";
import type { FailureItem } from "./failure-item.ts";
import { NearDuplicateIndex } from "./near-duplicate-index.ts";
import { seededShuffle } from "./seeded-shuffle.ts";

/** Inputs of an EvalSet. */
export interface EvalSetOptions {
  tenantId: string;
  seed: number;
  /**
   * Failed production traces, each in its pattern. Items with a reference solution are taken first; the rest
   * become reference-free rows (a judge scores them) while the pattern has room.
   */
  failures: readonly FailureItem[];
  /** Rows for the general regression slice (e.g. the `eval` split, or past successes). */
  general: readonly DatasetRow[];
  /** Questions the tenant trains on (prompt pools, preference sets, SFT data): nothing close to them enters the EvalSet. */
  trainingQuestions: readonly string[];
  /** Items per pattern at most (default 20). */
  perPattern?: number;
  /** Items of the general slice (default 50). */
  generalSize?: number;
  /** Word unigram+bigram Jaccard at or above which two questions are the same item (default 0.8). */
  nearDuplicateThreshold?: number;
}

/**
 * Builds a held-out EvalSet: per pattern up to `perPattern` de-duplicated failures (near-duplicates merged into
 * one item whose lineage lists all their traces), plus a general regression slice; nothing within
 * `nearDuplicateThreshold` of the training questions. Deterministic for a seed.
 */
export function buildEvalSet(options: EvalSetOptions): Dataset<"eval"> {
  const perPattern = options.perPattern ?? 20;
  const generalSize = options.generalSize ?? 50;
  const threshold = options.nearDuplicateThreshold ?? 0.8;
  const training = NearDuplicateIndex.of(options.trainingQuestions, threshold);
  const seen = new NearDuplicateIndex(threshold);
  const rows: EvalRow[] = [];
  const byId = new Map<string, EvalRow>();
  const stats = { referenceFree: 0, overlapsTraining: 0, duplicatesMerged: 0, overPatternCap: 0 };

  const byPattern = new Map<string, FailureItem[]>();
  for (const f of options.failures) byPattern.set(f.patternId, [...(byPattern.get(f.patternId) ?? []), f]);
  const patternIds = [...byPattern.keys()].sort();
  for (const patternId of patternIds) {
    let taken = 0;
    const shuffled = seededShuffle(byPattern.get(patternId) ?? [], options.seed ^ hashOf(patternId));
    const verifiableFirst = [
      ...shuffled.filter((f) => f.solution !== undefined),
      ...shuffled.filter((f) => f.solution === undefined),
    ];
    for (const f of verifiableFirst) {
      if (training.find(f.question) !== undefined) {
        stats.overlapsTraining++;
        continue;
      }
      const dup = seen.find(f.question);
      if (dup !== undefined) {
        byId.get(dup)?.meta.sourceTraceIds.push(f.traceId);
        stats.duplicatesMerged++;
        continue;
      }
      if (taken >= perPattern) {
        stats.overPatternCap++;
        continue;
      }
      const row: EvalRow = {
        id: `ev-${sha256(`${f.env ?? ""}|${f.question}`).slice(0, 16)}`,
        question: f.question,
        ...(f.solution === undefined ? {} : { solution: f.solution }),
        ...(f.env ? { env: f.env } : {}),
        context: f.context,
        meta: { slice: patternId, patternId, sourceTraceIds: [f.traceId] },
      };
      if (f.solution === undefined) stats.referenceFree++;
      rows.push(row);
      byId.set(row.id, row);
      seen.add(row.id, f.question);
      taken++;
    }
  }

  let general = 0;
  for (const [i, g] of seededShuffle(options.general, options.seed).entries()) {
    if (general >= generalSize) break;
    if (training.find(g.question) !== undefined) {
      stats.overlapsTraining++;
      continue;
    }
    if (seen.find(g.question) !== undefined) {
      stats.duplicatesMerged++;
      continue;
    }
    const sourceId = typeof g.meta.id === "string" ? g.meta.id : `general-${i}`;
    const row: EvalRow = {
      id: `ev-${sha256(`${g.env}|${g.question}`).slice(0, 16)}`,
      question: g.question,
      solution: g.solution,
      env: g.env,
      meta: { slice: "general", sourceTraceIds: [], sourceId },
    };
    rows.push(row);
    seen.add(row.id, g.question);
    general++;
  }
  for (const row of rows) row.meta.sourceTraceIds.sort();
  return createDataset(
    "eval",
    options.tenantId,
    rows,
    {
      seed: options.seed,
      patternIds,
      params: { perPattern, generalSize, nearDuplicateThreshold: threshold },
    },
    { ...stats, generalRows: general },
  );
}

function hashOf(text: string): number {
  return Number.parseInt(sha256(text).slice(0, 8), 16);
}
