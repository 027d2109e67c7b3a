import { DetectorRegistry, jsonTaskFamily } from "@arc/core";
import { listTaskFamilySpecs } from "../families/task-family-store.ts";
import { judgeTrust } from "../judges/judge-trust.ts";
import { type JudgeUpstreams, tenantJudgeDetector } from "../judges/tenant-judge.ts";
import type { Queryable } from "../store/database.ts";
import { loadDetectorConfig } from "../store/detector-configs.ts";
import type { RegistrySetup } from "./failure-pipeline-config.ts";

/**
 * The tenant's registry: the verifiers of the families the tenant registered as data, the tenant's judge when it set
 * a rubric and a judge model and trusts it (`judgeTrust`; and `judgeUpstreams` are given), then the code-registered detectors and verifiers
 * (`setup`, which may replace them), so the stored settings may name them, then the stored settings.
 */
export async function tenantRegistry(
  db: Queryable,
  tenantId: string,
  setup: RegistrySetup | undefined,
  judgeUpstreams?: JudgeUpstreams,
): Promise<DetectorRegistry> {
  const registry = new DetectorRegistry();
  for (const stored of await listTaskFamilySpecs(db, tenantId)) {
    const verify = jsonTaskFamily(stored.spec, `family ${stored.env}`).verify;
    if (verify) registry.registerVerifier(stored.env, verify);
  }
  // an untrusted judge fails no trace: it joins detection once calibrated (see judgeTrust)
  const judge =
    judgeUpstreams && (await judgeTrust(db, tenantId)).trusted
      ? await tenantJudgeDetector(db, tenantId, judgeUpstreams, "background")
      : undefined;
  if (judge) registry.register(judge);
  setup?.(registry, tenantId);
  registry.configure(await loadDetectorConfig(db, tenantId));
  return registry;
}
