import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { UsableJudge } from "../judges/tenant-judge.ts";

/** The name of the rubric file a run rewarded by the tenant's judge reads, before its version. */
const TENANT_RUBRIC_PREFIX = "judge-rubric-v";

/** Whether a run's overrides make its reward the tenant's judge (those `judgeRewardOverrides` writes). */
export function rewardedByTenantJudge(overrides: readonly string[]): boolean {
  return (
    overrides.includes("reward.kind=judge") &&
    overrides.some(
      (o) => o.startsWith("reward.judge.rubric=") && basename(o).startsWith(TENANT_RUBRIC_PREFIX),
    )
  );
}

/**
 * The overrides that make a run's reward the tenant's judge (for a family with no verifier): its endpoint, model,
 * budget and the concurrency the server's queue allows it (the run's own queue holds its calls to it), and its rubric, written to `<runsDir>/judge-rubric-v<version>.json` for the training process to read.
 */
export function judgeRewardOverrides({ rubric, judge, upstream }: UsableJudge, runsDir: string): string[] {
  mkdirSync(runsDir, { recursive: true });
  const rubricPath = join(runsDir, `${TENANT_RUBRIC_PREFIX}${rubric.version}.json`);
  const partial = `${rubricPath}.${process.pid}.partial`;
  writeFileSync(partial, `${JSON.stringify(rubric, null, 2)}\n`);
  renameSync(partial, rubricPath);
  return [
    "reward.kind=judge",
    `reward.judge.baseUrl=${upstream.baseUrl}`,
    `reward.judge.model=${judge.model}`,
    `reward.judge.rubric=${rubricPath}`,
    ...(upstream.apiKeyEnv ? [`reward.judge.apiKeyEnv=${upstream.apiKeyEnv}`] : []),
    `reward.judge.callsPerMinute=${judge.callsPerMinute}`,
    `reward.judge.tokensPerMinute=${judge.tokensPerMinute}`,
    `reward.judge.concurrency=${upstream.judgeConcurrency ?? 1}`,
  ];
}
