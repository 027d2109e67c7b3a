import { activeDeployment, listDeployments } from "../deploy/deployment-store.ts";
import { deploymentFailureRates } from "../deploy/live-evidence.ts";
import type { Queryable } from "../store/database.ts";
import { listModelVersions, type ModelVersion } from "../store/model-registry.ts";
import { listValidations } from "../validate/validate-candidate.ts";
import type { DemoPlan } from "./demo-plan.ts";
import { type DemoProgress, sleep } from "./demo-progress.ts";

/**
 * Phases 5 and 6: the validator and the deployer work by themselves; the demo waits for the validator's verdict
 * and then for the canary's decision, each until its share of the budget, and reports them.
 */
export async function awaitRelease(context: {
  db: Queryable;
  tenantId: string;
  candidate: { id: string; name: string };
  progress: DemoProgress;
  /** The traffic's state for a progress line. */
  trafficLine: (phase: string) => Promise<string>;
  /** Where in the budget each wait ends. */
  plan: Pick<DemoPlan, "validationEndsAt" | "canaryEndsAt">;
}): Promise<void> {
  const { db, tenantId, candidate, progress } = context;
  let model: ModelVersion | undefined;
  while (Date.now() < progress.at(context.plan.validationEndsAt)) {
    const polled = await pollOnce(progress, async () => {
      [model] = (await listModelVersions(db, tenantId)).filter((m) => m.id === candidate.id);
      if (model && model.status !== "candidate") return "done";
      progress.live.update(await context.trafficLine(`validate [${candidate.name}: ${model?.status}]`));
    });
    if (polled === "done") break;
    await sleep(500);
  }
  const [validation] = await listValidations(db, tenantId, candidate.id);
  progress.endPhase(
    "validate",
    validation
      ? `${validation.decision}: NDR ${validation.report.scores.ndr.toFixed(3)}, functional ${validation.report.scores.baselineFunctional.toFixed(2)} → ${validation.report.scores.functional.toFixed(2)}; ${validation.report.reasons.join("; ")}`
      : "still running at its share of the budget (the canary phase waits for it)",
  );

  // also when validation is still running: its verdict may start a canary late
  if (validation?.decision !== "fail") {
    while (Date.now() < progress.at(context.plan.canaryEndsAt)) {
      if ((await pollOnce(progress, () => canaryPoll(db, tenantId, candidate, progress))) === "done") break;
      await sleep(1000);
    }
  }
  const [decided] = await listDeployments(db, tenantId, 1);
  progress.endPhase(
    "canary",
    decided
      ? `deployment ${decided.id}: ${decided.status} at stage ${decided.stage + 1} (${(decided.share * 100).toFixed(0)}%)`
      : "no canary: the candidate was not validated",
  );
}

/**
 * One poll of a wait: a poll that fails (the embedded database busy while the engine holds the server's main thread)
 * is said on the live line and the wait goes on.
 */
async function pollOnce(
  progress: DemoProgress,
  poll: () => Promise<"done" | undefined>,
): Promise<"done" | undefined> {
  try {
    return await poll();
  } catch (error) {
    progress.live.update(
      `[${progress.elapsed().toFixed(0)} s] waiting: ${error instanceof Error ? error.message : String(error)}`,
    );
    return undefined;
  }
}

/** One look at the canary: "done" once it decided (or the candidate was rejected), else its evidence on the line. */
async function canaryPoll(
  db: Queryable,
  tenantId: string,
  candidate: { id: string },
  progress: DemoProgress,
): Promise<"done" | undefined> {
  const dep = await activeDeployment(db, tenantId);
  const [latest] = await listDeployments(db, tenantId, 1);
  if (!dep && latest && latest.status !== "canary") return "done";
  const rejected = (await listModelVersions(db, tenantId, ["rejected"])).some((m) => m.id === candidate.id);
  if (rejected) return "done";
  if (dep) {
    const evidence = (await deploymentFailureRates(db, dep))
      .filter((r) => r.stage === dep.stage)
      .map((r) => `${r.arm} ${r.failures}/${r.n}`)
      .join(", ");
    progress.live.update(
      `canary [${progress.elapsed().toFixed(0)} s] stage ${dep.stage + 1}/${dep.policy.ramp.length} share ${(dep.share * 100).toFixed(0)}% evidence ${evidence || "none yet"} · ${(dep.lastStep?.reason as string | undefined) ?? ""}`,
    );
  } else
    progress.live.update(`canary [${progress.elapsed().toFixed(0)} s] waiting for the deployer to start it`);
  return undefined;
}
