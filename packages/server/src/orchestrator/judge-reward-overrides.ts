import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { UsableJudge } from "../judges/tenant-judge.ts";

/**
 * The overrides that make a run's reward the tenant's judge (for a family with no verifier): its endpoint, model
 * and budget, and its rubric, written to `<runsDir>/judge-rubric-v<version>.json` for the training process to read.
 */
export function judgeRewardOverrides({ rubric, judge, upstream }: UsableJudge, runsDir: string): string[] {
  mkdirSync(runsDir, { recursive: true });
  const rubricPath = join(runsDir, `judge-rubric-v${rubric.version}.json`);
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
  ];
}
