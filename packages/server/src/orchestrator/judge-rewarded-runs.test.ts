import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { calibrationReport, parseRubric } from "@arc/core";
import { loadRecipe } from "@arc/rl";
import { SUPPORT_FAMILY_SPEC } from "../families/__fixtures__/support-family.ts";
import { putTaskFamily, tenantTaskFamilies } from "../families/task-family-store.ts";
import { CITY_RUBRIC } from "../judges/__fixtures__/misread-city.ts";
import { putJudgeModel, putRubric, saveCalibration } from "../judges/judge-store.ts";
import type { Database } from "../store/database.ts";
import { listModelVersions } from "../store/model-registry.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { insertTraces } from "../store/trace-store.ts";
import {
  ingestJudged,
  QUICK_RUN,
  tenantWithProduction,
  toolcallTraffic,
} from "./__fixtures__/orchestrator-tenant.ts";
import { executeRun, recipeFile } from "./execute-run.ts";
import { Orchestrator, tenantOrchestratorStatus } from "./orchestrator.ts";
import { OrchestratorConfig } from "./orchestrator-config.ts";
import { createRun, tenantRun, tenantRunsDir } from "./run-store.ts";

/** The allowlisted upstream the tenant's judge runs on (nothing listens there: no run is started here). */
const UPSTREAMS = { judges: { baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: "JUDGE_KEY" } };

/** A calibration report a trusted judge has: 60 labelled traces, 54 agreeing, labels evenly split (kappa 0.8). */
const TRUSTED_REPORT = calibrationReport(
  Array.from({ length: 60 }, (_, i) => ({
    traceId: `t${i}`,
    label: { failed: i % 2 === 0 },
    judged: { failed: i < 54 ? i % 2 === 0 : i % 2 !== 0 },
  })),
);

/** Stores `count` failures of family `env`, as the detection worker would once the judge flagged their traces. */
async function judgedFailures(db: Database, tenantId: string, env: string, count: number): Promise<void> {
  const startedAt = "2026-11-27T10:00:00.000Z";
  await insertTraces(
    db,
    tenantId,
    Array.from({ length: count }, (_, i) => ({
      id: `${env}-${i}`,
      env,
      status: "ok" as const,
      startedAt,
      steps: [
        { id: "s1", kind: "llm" as const, startedAt, llm: { messages: [{ role: "user", content: "hi" }] } },
      ],
    })),
  );
  for (let i = 0; i < count; i++)
    await db.query(
      `insert into failures (tenant_id, trace_id, pattern_id, failure_class, env) values ($1, $2, 'pat_judged', 'rubric_violation', $3)`,
      [tenantId, `${env}-${i}`, env],
    );
}

for (const target of databasesUnderTest()) {
  describe(`runs for a family with no verifier, rewarded by the tenant's judge, on ${target.name}`, {
    skip: target.skip,
  }, () => {
    let db: Database;
    before(async () => {
      db = await target.open();
    });
    after(() => db?.close());

    it("trains the family its judge flags, with the judge as the reward and its rubric beside the runs", async () => {
      const { tenantId, artifactsDir } = await tenantWithProduction(db, "judged-only");
      await putTaskFamily(db, tenantId, { ...SUPPORT_FAMILY_SPEC, env: "judged", verifier: "judge" });
      await judgedFailures(db, tenantId, "judged", 6);
      const config = OrchestratorConfig.parse({
        enabled: true,
        minNewFailures: 5,
        cooldownMs: 0,
        recipe: "recipes/corrections-dpo.yaml",
      });

      // no judge yet: no family of these failures can reward a run
      const without = await tenantOrchestratorStatus(db, tenantId, config, UPSTREAMS);
      assert.deepEqual([without.env, without.reward], [null, null]);

      await putRubric(db, tenantId, CITY_RUBRIC);
      await putJudgeModel(
        db,
        tenantId,
        { upstream: "judges", model: "judge-1", callsPerMinute: 30 },
        UPSTREAMS,
      );
      // an uncalibrated judge rewards nothing: the orchestrator waits, saying why
      const waiting = await tenantOrchestratorStatus(db, tenantId, config, UPSTREAMS);
      assert.deepEqual([waiting.env, waiting.reward, waiting.due], [null, null, false]);
      assert.match(
        waiting.reason,
        /^waits: the judged family has no verifier, and its judge is not trusted yet: the judge \(judge-1, rubric v1\) was never calibrated: calibrate it on at least 50 labelled traces to a kappa of 0\.6/,
      );
      await saveCalibration(db, tenantId, { rubricVersion: 1, model: "judge-1", report: TRUSTED_REPORT });
      const status = await tenantOrchestratorStatus(db, tenantId, config, UPSTREAMS);
      assert.deepEqual([status.env, status.reward, status.due], ["judged", "judge", true]);
      // an upstream the server no longer allows leaves the judge out
      const disallowed = await tenantOrchestratorStatus(db, tenantId, config, {});
      assert.deepEqual([disallowed.env, disallowed.reward], [null, null]);

      const orchestrator = new Orchestrator({ db, config, artifactsDir, judgeUpstreams: UPSTREAMS });
      try {
        const run = await orchestrator.queueIfDue(tenantId);
        assert.ok(run);
        const rubricPath = run.overrides
          .find((o) => o.startsWith("reward.judge.rubric="))
          ?.split("=")[1] as string;
        assert.deepEqual(run.overrides, [
          "data.env=judged",
          "data.evalCount=0",
          "reward.kind=judge",
          "reward.judge.baseUrl=http://127.0.0.1:9/v1",
          "reward.judge.model=judge-1",
          `reward.judge.rubric=${rubricPath}`,
          "reward.judge.apiKeyEnv=JUDGE_KEY",
          "reward.judge.callsPerMinute=30",
          "reward.judge.tokensPerMinute=60000",
          "reward.judge.concurrency=1",
        ]);
        assert.ok(rubricPath.startsWith(run.runsDir));
        // a tenant sees its run without the server's judge endpoint
        const shown = tenantRun(run).overrides;
        assert.ok(shown.includes("reward.judge.baseUrl=(the server's judge upstream)"), shown.join(" "));
        assert.ok(!shown.some((o) => o.includes("127.0.0.1:9") || o.includes("JUDGE_KEY")));
        assert.deepEqual(
          parseRubric(JSON.parse(readFileSync(rubricPath, "utf8"))),
          parseRubric(CITY_RUBRIC, 1),
        );

        // the training process reads exactly this recipe: it accepts the family with the judge's reward
        const recipe = await loadRecipe(
          recipeFile(config.recipe),
          run.overrides,
          config.recipe,
          await tenantTaskFamilies(db, tenantId),
        );
        assert.deepEqual(
          [recipe.data.env, recipe.reward.kind, recipe.reward.judge?.model, recipe.reward.judge?.rubric],
          ["judged", "judge", "judge-1", rubricPath],
        );

        // a run that names the judge is refused once its rubric changed since its calibration
        await putRubric(db, tenantId, CITY_RUBRIC);
        await db.query("update runs set status = 'running', owner = 'server-a' where id = $1", [run.id]);
        const refused = await executeRun(
          db,
          { ...run, status: "running", owner: "server-a" },
          {
            owner: "server-a",
            pollMs: 50,
            datasetSize: 16,
            onAbort: "cancel",
          },
        );
        assert.equal(refused.run.status, "failed");
        assert.match(
          refused.run.error ?? "",
          /was not started: its reward is the tenant's judge, which is not trusted yet: rubric v2 was never calibrated \(the latest calibration measured v1\)/,
        );
        assert.equal(refused.candidate, null);
      } finally {
        await orchestrator.close();
      }
    });

    it("ends failed, with the reason, a run whose judge scored none of its samples, and registers no candidate", async () => {
      const { tenantId, artifactsDir } = await tenantWithProduction(db, "starved-judge");
      const { traffic, setupRegistry } = toolcallTraffic(56, 40);
      await ingestJudged(db, tenantId, traffic, setupRegistry);
      const runsDir = tenantRunsDir(artifactsDir, tenantId);
      const rubric = join(artifactsDir, "..", "rubric.json");
      writeFileSync(rubric, JSON.stringify(CITY_RUBRIC));
      // nothing listens on the judge's upstream (the discard port): every sample goes unjudged
      const run = await createRun(db, tenantId, {
        trigger: "orchestrator",
        recipePath: "recipes/toolcall-dpo.yaml",
        overrides: [
          ...QUICK_RUN,
          "reward.kind=judge",
          "reward.judge.baseUrl=http://127.0.0.1:9/v1",
          "reward.judge.model=judge-1",
          `reward.judge.rubric=${rubric}`,
        ],
        runsDir,
        status: "running",
        owner: "server-a",
      });
      const ended = await executeRun(db, run, {
        owner: "server-a",
        pollMs: 50,
        datasetSize: 16,
        setupRegistry,
        onAbort: "cancel",
      });
      assert.equal(ended.run.status, "failed");
      assert.match(
        ended.run.error ?? "",
        /the judge scored none of the run's 8 samples: the run learned from nothing and registers no candidate/,
      );
      assert.equal(ended.candidate, null);
      assert.deepEqual(
        (await listModelVersions(db, tenantId)).map((v) => v.name),
        ["tiny-base"],
      );
    });
  });
}
