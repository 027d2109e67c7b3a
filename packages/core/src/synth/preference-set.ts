import { taskFamilies } from "../families/task-families.ts";
import type { Verifier } from "../verify/index.ts";
import { createDataset, type Dataset, type PreferenceRow, questionsOf, sha256 } from "./dataset.ts";
import type { FailureItem } from "./failure-item.ts";
import { duplicateKey, NearDuplicateIndex } from "./near-duplicate-index.ts";

/** A possible `chosen` answer for a failed trace, given by the caller. */
export interface ChosenCandidate {
  text: string;
  /** `human`: a correction from feedback; `policy`: a resampled policy output; `teacher`: a stronger model's output. */
  source: "human" | "policy" | "teacher";
}

/** Inputs of a PreferenceSet. */
export interface PreferenceSetOptions {
  tenantId: string;
  seed: number;
  failures: readonly FailureItem[];
  /** Candidate chosen answers per failed trace id, in any order (humans are tried first, then policy, then teacher). */
  candidates: Readonly<Record<string, readonly ChosenCandidate[]>>;
  /** Verifiers by env id (default: the registered families' verifiers). */
  verifiers?: Readonly<Record<string, Verifier>>;
  /** The tenant's EvalSets: no pair whose prompt is within `nearDuplicateThreshold` of them is made. */
  evalSets: readonly Dataset[];
  nearDuplicateThreshold?: number;
}

const ORDER: ChosenCandidate["source"][] = ["human", "policy", "teacher"];

/**
 * Builds a PreferenceSet: for each failed trace, rejected = its failed output, chosen = the first candidate
 * (human, then policy, then teacher) that passes the env's verifier. A human correction is taken unverified only
 * when no verifier or reference exists; policy and teacher outputs must always verify. A pair is dropped when
 * the rejected output actually passes, when no candidate qualifies, or when its prompt is an eval question.
 */
export function buildPreferenceSet(options: PreferenceSetOptions): Dataset<"preferences"> {
  const verifierOf = (env: string | undefined): Verifier | undefined =>
    env === undefined
      ? undefined
      : options.verifiers
        ? Object.hasOwn(options.verifiers, env)
          ? options.verifiers[env]
          : undefined
        : taskFamilies.verifier(env);
  const held = NearDuplicateIndex.of(
    options.evalSets.flatMap(questionsOf),
    options.nearDuplicateThreshold ?? 0.8,
  );
  const stats = { overlapsEval: 0, rejectedPasses: 0, noVerifiedChosen: 0, duplicatePairs: 0 };
  const rows = new Map<string, PreferenceRow>();
  const sorted = [...options.failures].sort((a, b) =>
    a.traceId < b.traceId ? -1 : a.traceId > b.traceId ? 1 : 0,
  );
  for (const f of sorted) {
    if (held.find(f.question) !== undefined) {
      stats.overlapsEval++;
      continue;
    }
    const verifier = verifierOf(f.env);
    const canVerify = verifier !== undefined && f.solution !== undefined;
    const passes = (text: string) =>
      canVerify &&
      verifier({ outputs: [...(f.priorOutputs ?? []), text], solution: f.solution }).status === "pass";
    if (passes(f.output)) {
      stats.rejectedPasses++;
      continue;
    }
    const candidates = [...(options.candidates[f.traceId] ?? [])].sort(
      (a, b) => ORDER.indexOf(a.source) - ORDER.indexOf(b.source),
    );
    const chosen = candidates.find(
      (c) =>
        duplicateKey(c.text) !== duplicateKey(f.output) &&
        (passes(c.text) || (c.source === "human" && !canVerify)),
    );
    if (!chosen) {
      stats.noVerifiedChosen++;
      continue;
    }
    const prompt = f.context.messages;
    const key = sha256(JSON.stringify([f.env, prompt, chosen.text, f.output]));
    const known = rows.get(key);
    if (known) {
      known.meta.sourceTraceIds.push(f.traceId);
      stats.duplicatePairs++;
      continue;
    }
    rows.set(key, {
      id: `pf-${key.slice(0, 16)}`,
      prompt,
      ...(f.context.tools ? { tools: f.context.tools } : {}),
      chosen: chosen.text,
      rejected: f.output,
      ...(f.env ? { env: f.env } : {}),
      meta: {
        patternId: f.patternId,
        sourceTraceIds: [f.traceId],
        chosenSource: chosen.source,
        chosenVerified: canVerify,
        rejectedModelVersion: f.modelVersion,
      },
    });
  }
  const patternIds = [...new Set(options.failures.map((f) => f.patternId))].sort();
  return createDataset(
    "preferences",
    options.tenantId,
    [...rows.values()],
    {
      seed: options.seed,
      patternIds,
      params: { nearDuplicateThreshold: options.nearDuplicateThreshold ?? 0.8 },
    },
    stats,
  );
}
