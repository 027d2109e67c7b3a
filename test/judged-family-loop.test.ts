import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  familyPrompt,
  generateToolcallTasks,
  jsonTaskFamily,
  type Task,
  type TaskFamily,
  toOpenAiTools,
  toolcallFamily,
} from "@arc/core";
import { waitUntil } from "@arc/core/testing";
import { EmbeddedInferenceEngine, type RunningEngineServer, startEngineServer } from "@arc/engine";
import OpenAI from "openai";
import { loadServerConfig } from "../packages/server/src/config/server-config.ts";
import { toolcallEvalFixture } from "../packages/server/src/deploy/__fixtures__/toolcall-eval-fixture.ts";
import { listDeployments } from "../packages/server/src/deploy/deployment-store.ts";
import { setReleaseSettings } from "../packages/server/src/deploy/release-settings.ts";
import { TOOLCALL_JUDGE_RUBRIC } from "../packages/server/src/judges/toolcall-judge-rubric.ts";
import { listRuns } from "../packages/server/src/orchestrator/run-store.ts";
import { type RunningServer, startServer } from "../packages/server/src/serve/start-server.ts";
import { createApiKey } from "../packages/server/src/store/keys.ts";
import { listModelVersions, registerModelVersion } from "../packages/server/src/store/model-registry.ts";
import { createTenant } from "../packages/server/src/store/tenants.ts";
import { listValidations } from "../packages/server/src/validate/validate-candidate.ts";

/** The orchestrator's overrides of recipes/corrections-dpo.yaml: a shorter run than a production one. */
const TRAINING = [
  "sftWarmUp.steps=10",
  "trainer.steps=4",
  "trainer.promptsPerStep=4",
  "trainer.checkpointEvery=4",
];
/** A tenant's own booking agent, registered as data with no verifier: only its judge can say what failed. */
const BOOKINGS_SPEC = {
  env: "bookings",
  description: "a booking assistant's tool calls",
  tools: toolcallFamily.tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
  verifier: "judge",
};

/**
 * A family Arc has no verifier for, from production traffic to a release decision. The tenant's agent calls the
 * shipped toolcall base through the gateway; the tenant's judge (the shipped judge, served as `arc engine serve`
 * serves it, on an upstream the operator allowlisted) flags its failures; the orchestrator trains the family with
 * that judge as the reward; the validator judges the candidate's answers on reference-free items by the win-rate
 * gate. A candidate the judge prefers is released through the canary; one it does not is rejected.
 */
describe("a family with no verifier: the tenant's judge detects, rewards and validates", () => {
  let home: string;
  let judge: RunningEngineServer;
  let server: RunningServer;
  const bookings: TaskFamily = jsonTaskFamily(BOOKINGS_SPEC);
  const tasks: Task[] = generateToolcallTasks({ split: "production", seed: 31, count: 600 });

  before(async () => {
    home = await mkdtemp(join(tmpdir(), "arc-judged-family-"));
    judge = await startEngineServer(await EmbeddedInferenceEngine.load(resolve("models/toolcall-judge")), {
      modelId: "toolcall-judge",
    });
    const upstreams = JSON.stringify({ judges: { baseUrl: judge.baseURL } });
    server = await startServer(loadServerConfig({ ARC_UPSTREAMS: upstreams }, { home, port: 0 }), {
      release: { validatorIntervalMs: 300, deployerIntervalMs: 200, judge: { maxTokens: 128 } },
      orchestrator: {
        enabled: true,
        minNewFailures: 24,
        intervalMs: 300,
        pollMs: 300,
        datasetSize: 48,
        recipe: "recipes/corrections-dpo.yaml",
        overrides: TRAINING,
      },
    });
  });
  after(async () => {
    await server?.close();
    await judge?.close();
    await rm(home, { recursive: true, force: true });
  });

  /**
   * A tenant with a shipped base in production (`toolcall-base` unless named), its family, the toolcall rubric and the
   * judge on its upstream.
   */
  async function judgedTenant(name: string, production = "toolcall-base") {
    const tenant = await createTenant(server.db, name);
    const { key } = await createApiKey(server.db, { role: "tenant", tenantId: tenant.id });
    const base = await registerModelVersion(server.db, tenant.id, {
      name: production,
      status: "promoted",
      artifactDir: resolve(`models/${production}`),
      actor: "test",
    });
    const put = async (path: string, body: unknown) => {
      const res = await fetch(`${server.url}/v1${path}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      assert.ok(res.ok, `${path}: ${res.status} ${await res.text()}`);
    };
    await put("/task-families/bookings", BOOKINGS_SPEC);
    await put("/judges/rubric", TOOLCALL_JUDGE_RUBRIC);
    await put("/judges/model", {
      upstream: "judges",
      model: "toolcall-judge",
      callsPerMinute: 6000,
      tokensPerMinute: 10_000_000,
    });
    // this family has no verifier and no reviewed traces to calibrate the judge on: the tenant trusts it uncalibrated
    await put("/detectors", { judgeMinKappa: null });
    return { tenantId: tenant.id, key, base };
  }

  /** A model's status once its validation moved it on (the validation is stored just before the move). */
  async function decidedStatus(tenantId: string, modelId: string): Promise<string> {
    const model = await waitUntil(
      async () =>
        (await listModelVersions(server.db, tenantId)).find(
          (m) => m.id === modelId && m.status !== "candidate",
        ),
      "the model's status after its validation",
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    return model.status;
  }

  /** The tenant's agent's recorded requests as a reference-free EvalSet (only the judge can decide them), stored. */
  async function storeReferenceFreeEvalSet(tenantId: string, key: string) {
    const tools = toOpenAiTools(bookings.tools ?? []);
    const requests = generateToolcallTasks({ split: "eval", seed: 41, count: 24 });
    const evalSet = {
      ...toolcallEvalFixture(tenantId).evalSet,
      version: "sha256:bookings-reference-free",
      rows: requests.map((task, i) => ({
        id: `bookings-${i}`,
        env: "bookings",
        question: task.question,
        context: { messages: [{ role: "user", content: task.question }], tools },
        meta: { slice: "pat-bookings", sourceTraceIds: [] },
      })),
    };
    const stored = await fetch(`${server.url}/v1/eval-sets`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(evalSet),
    });
    assert.equal(stored.status, 201, await stored.text());
    return requests;
  }

  /** One production call of the tenant's agent through the gateway, per call of the returned function. */
  function agent(key: string) {
    const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key });
    const tools = toOpenAiTools(bookings.tools ?? []) as unknown as OpenAI.ChatCompletionTool[];
    let sent = 0;
    return async () => {
      const task = tasks[sent % tasks.length];
      await openai.chat.completions.create(
        {
          model: "arc",
          messages: familyPrompt(bookings, task) as OpenAI.ChatCompletionMessageParam[],
          tools,
          temperature: 1,
          seed: sent,
          max_tokens: 96,
        },
        { headers: { "x-arc-env": "bookings", "x-arc-trace-id": `bookings-${sent++}` } },
      );
    };
  }

  it("trains on what the judge flags, with the judge's reward, and the validator decides on it by the win-rate gate", async () => {
    const { db } = server;
    const { tenantId, key } = await judgedTenant("booking-team");
    await setReleaseSettings(db, tenantId, {
      gates: { minFunctional: 0, minNdr: 0, judging: "pointwise" },
      canary: { autoStart: false },
    });
    const converse = agent(key);
    await waitUntil(
      async () => {
        await converse();
        return (await listRuns(db, tenantId)).length > 0;
      },
      "the orchestrator to start a run on the judge's failures",
      { timeoutMs: 180_000, intervalMs: 0 },
    );
    const run = await waitUntil(
      async () => {
        const [latest] = await listRuns(db, tenantId);
        return ["succeeded", "failed", "cancelled"].includes(latest.status) ? latest : undefined;
      },
      "the run to end",
      { timeoutMs: 300_000, intervalMs: 500 },
    );
    assert.equal(run.status, "succeeded", run.error ?? "");
    assert.ok(run.overrides.includes("reward.kind=judge"), run.overrides.join(" "));
    assert.ok(run.overrides.includes("reward.judge.model=toolcall-judge"), run.overrides.join(" "));
    assert.ok((run.metrics.judgeCalls as number) > 0, JSON.stringify(run.metrics));
    assert.ok(run.candidateId);

    const validation = await waitUntil(
      async () => (await listValidations(db, tenantId, run.candidateId as string))[0],
      "the validator's decision",
      { timeoutMs: 180_000, intervalMs: 300 },
    );
    const { report } = validation;
    const judged = report.slices.filter((s) => s.kind === "pattern");
    assert.ok(judged.length > 0, "the pattern slices were judged");
    for (const slice of judged) assert.deepEqual(Object.keys(slice.judgedBy), ["judge:toolcall-judge"]);
    console.log(
      `the judged family's candidate: ${validation.decision}: ${report.reasons.join("; ") || "every gate passed"}`,
    );
    const winRateGate = report.checks.find((c) => c.gate === "win_rate");
    assert.ok(winRateGate, report.reasons.join("; "));
    assert.equal(validation.decision, winRateGate.passed ? "pass" : "fail", report.reasons.join("; "));
    assert.equal(
      await decidedStatus(tenantId, run.candidateId),
      validation.decision === "pass" ? "validated" : "rejected",
    );
  });

  it("rejects a candidate that is worse under the judge, with the judged items in the validation report", async () => {
    const { db } = server;
    const { tenantId, key } = await judgedTenant("booking-team-2");
    await setReleaseSettings(db, tenantId, { gates: { minFunctional: 0, minNdr: 0, judging: "pointwise" } });
    const requests = await storeReferenceFreeEvalSet(tenantId, key);
    // the shipped arithmetic base: it answers sums, never a booking tool
    const worse = await registerModelVersion(db, tenantId, {
      name: "arith-base",
      artifactDir: resolve("models/arith-base"),
      actor: "test",
    });
    const validation = await waitUntil(
      async () => (await listValidations(db, tenantId, worse.id))[0],
      "the validator's decision",
      { timeoutMs: 180_000, intervalMs: 300 },
    );
    const { report } = validation;
    assert.equal(validation.decision, "fail", report.reasons.join("; "));
    const winRate = report.scores.winRate;
    assert.ok(winRate && winRate.n > 0 && winRate.losses > winRate.wins, JSON.stringify(winRate));
    assert.equal(report.checks.find((c) => c.gate === "win_rate")?.passed, false);
    const slice = report.slices.find((s) => s.slice === "pat-bookings");
    assert.deepEqual(slice?.judgedBy, { "judge:toolcall-judge": winRate.n });
    assert.equal((slice?.n ?? 0) + (report.unjudged ?? 0), requests.length);
    assert.ok((slice?.candidateFailureRate ?? 0) > (slice?.baselineFailureRate ?? 1), JSON.stringify(slice));
    assert.equal(await decidedStatus(tenantId, worse.id), "rejected");
  });

  it("releases a candidate the validator passed on the judge's items: through the canary into production", async () => {
    const { db } = server;
    // the shipped arithmetic base in production (it answers sums, never a booking tool); the toolcall base as candidate
    const { tenantId, key, base } = await judgedTenant("booking-team-3", "arith-base");
    // the gate that refuses a worse candidate is the test above's; here it lets any judged candidate through, so that
    // the release path runs whatever the shipped judge (a weak one) makes of the few items it decides. That judge
    // decides about one in twenty of the candidate's answers (the rest are `unknown`: its confidence or class out of
    // range), so the canary asks for 4 decided samples an arm, not the default's 30
    await setReleaseSettings(db, tenantId, {
      gates: { minFunctional: 0, minNdr: 0, minWinRate: 0, judging: "pointwise" },
      canary: { ramp: [0.5, 1], minSamplesPerStage: 4, minControlSamples: 4 },
    });
    await storeReferenceFreeEvalSet(tenantId, key);
    const candidate = await registerModelVersion(db, tenantId, {
      name: "toolcall-base",
      artifactDir: resolve("models/toolcall-base"),
      parentId: base.id,
      actor: "test",
    });
    const validation = await waitUntil(
      async () => (await listValidations(db, tenantId, candidate.id))[0],
      "the validator's decision",
      { timeoutMs: 180_000, intervalMs: 300 },
    );
    const { report } = validation;
    assert.equal(validation.decision, "pass", report.reasons.join("; "));
    assert.ok((report.scores.winRate?.n ?? 0) > 0, "the judge decided items");
    assert.equal(report.checks.find((c) => c.gate === "win_rate")?.passed, true);
    // past the gate: the canary needs live traffic, and production moves to the candidate
    const converse = agent(key);
    await waitUntil(
      async () => {
        const [deployment] = await listDeployments(db, tenantId, 1);
        if (deployment && deployment.status !== "canary") return true;
        if (deployment) for (let i = 0; i < 4; i++) await converse();
        return false;
      },
      "the deployer's decision",
      { timeoutMs: 300_000, intervalMs: 200 },
    );
    const [deployment] = await listDeployments(db, tenantId, 1);
    assert.equal(deployment.status, "promoted", JSON.stringify(deployment.lastStep));
    const [production] = await listModelVersions(db, tenantId, ["promoted"]);
    assert.equal(production.id, candidate.id);
    assert.equal(production.parentId, base.id);
  });
});
