import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  DetectorRegistry,
  familyPrompt,
  generateTasks,
  jsonTaskFamily,
  solutionsByQuestion,
  type Task,
  type TaskFamily,
  taskFamilies,
  toOpenAiTools,
  toolCallText,
} from "@arc/core";
import { waitUntil } from "@arc/core/testing";
import { loadTaskFamilies } from "@arc/rl";
import OpenAI from "openai";
import { loadServerConfig } from "../packages/server/src/config/server-config.ts";
import { listDeployments } from "../packages/server/src/deploy/deployment-store.ts";
import { setReleaseSettings } from "../packages/server/src/deploy/release-settings.ts";
import { SUPPORT_FAMILY_SPEC } from "../packages/server/src/families/__fixtures__/support-family.ts";
import { listRuns, type RunRecord } from "../packages/server/src/orchestrator/run-store.ts";
import { type RunningServer, startServer } from "../packages/server/src/serve/start-server.ts";
import type { Database } from "../packages/server/src/store/database.ts";
import { createApiKey } from "../packages/server/src/store/keys.ts";
import { listModelVersions, registerModelVersion } from "../packages/server/src/store/model-registry.ts";
import { createTenant, findTenant } from "../packages/server/src/store/tenants.ts";
import { listValidations } from "../packages/server/src/validate/validate-candidate.ts";

const FAMILY = resolve("examples/unit-convert/family.ts");
/** SFT steps of each run's warm-up: enough for the shipped base to answer some of either family's tasks. */
const WARM_UP_STEPS = 100;
/** The orchestrator's overrides of recipes/corrections-dpo.yaml: a shorter run than a production one. */
const TRAINING = [
  `sftWarmUp.steps=${WARM_UP_STEPS}`,
  "trainer.steps=4",
  "trainer.checkpointEvery=4",
  "data.evalCount=16",
];

/** Every file under `dir` (node_modules left out). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === "node_modules") return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** A support agent's refund tasks, for the task family a tenant registers as data (which has no generator). */
function refundTasks(count: number): Task[] {
  const phrasings = [
    (id: string, amount: number) => `Please refund order ${id} of ${amount} dollars.`,
    (id: string, amount: number) => `Refund ${amount} on order ${id}.`,
    (id: string, amount: number) => `Order ${id} was wrong, give back $${amount}.`,
  ];
  return Array.from({ length: count }, (_, i) => {
    const id = `${String.fromCharCode(65 + (i % 26))}${10 + ((i * 37) % 90)}`;
    const amount = 1 + ((i * 53) % 99);
    return {
      id: `refund-${i}`,
      env: "support",
      question: phrasings[i % phrasings.length](id, amount),
      solution: { tool: "refund", args: { order_id: id, amount } },
    };
  });
}

/** A tenant's agent on the gateway, reviewed by a person who corrects every wrong answer through the feedback API. */
function reviewedAgent(server: RunningServer, key: string, family: TaskFamily, tasks: Task[]) {
  const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key });
  const tools = toOpenAiTools(family.tools ?? []) as unknown as OpenAI.ChatCompletionTool[];
  let sent = 0;
  return async () => {
    const task = tasks[sent % tasks.length];
    const traceId = `${family.env}-${sent++}`;
    const reply = await openai.chat.completions.create(
      {
        model: "arc",
        messages: familyPrompt(family, task) as OpenAI.ChatCompletionMessageParam[],
        tools,
        temperature: 0,
        max_tokens: 96,
      },
      { headers: { "x-arc-env": family.env, "x-arc-trace-id": traceId } },
    );
    const message = reply.choices[0].message;
    const call = message.tool_calls?.[0];
    const said = call?.type === "function" ? toolCallText(call.function) : (message.content ?? "");
    if (family.verify?.({ outputs: [said], solution: task.solution }).status === "pass") return;
    const correction = {
      id: `fb-${traceId}`,
      traceId,
      label: "wrong",
      correction: family.reference(task)[0],
    };
    // the gateway stores its trace just after answering: feedback on a trace not stored yet is a 404
    await waitUntil(async () => {
      const res = await fetch(`${server.url}/v1/feedback`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(correction),
      });
      if (res.status !== 404) assert.equal(res.status, 200, await res.text());
      return res.status === 200;
    }, `trace ${traceId} to take feedback`);
  };
}

/** Sends `converse` until the orchestrator started a run for the tenant, then waits for the run to end. */
async function trainedRun(db: Database, tenantId: string, converse: () => Promise<void>) {
  await waitUntil(
    async () => {
      // four conversations at a time: the engine answers them in one batch
      await Promise.all([converse(), converse(), converse(), converse()]);
      return (await listRuns(db, tenantId)).length > 0;
    },
    "the orchestrator to start a run",
    { timeoutMs: 120_000, intervalMs: 0 },
  );
  await waitUntil(
    async () => ["succeeded", "failed", "cancelled"].includes((await listRuns(db, tenantId))[0].status),
    "the run to end",
    { timeoutMs: 240_000, intervalMs: 500 },
  );
  const [run] = await listRuns(db, tenantId);
  assert.equal(run.status, "succeeded", run.error ?? "");
  assert.deepEqual(run.datasets.map((d) => d.kind).sort(), ["eval", "preferences", "prompts"]);
  assert.ok(run.candidateId);
  return { ...run, candidateId: run.candidateId };
}

/** The run's SFT warm-up completed its steps; returns its first metrics row, the base's before any step. */
function assertWarmedUp(run: RunRecord, warmUpSteps: number): Record<string, unknown> {
  const warmUp = join(run.runsDir, run.id, "sft-warm-up");
  const state = JSON.parse(readFileSync(join(warmUp, "state.json"), "utf8"));
  assert.deepEqual([state.status, state.step], ["completed", warmUpSteps]);
  const [fromBase] = readFileSync(join(warmUp, "metrics.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  return fromBase;
}

/** The run's SFT warm-up completed its steps, and the run ends better on held-out tasks than the base began. */
function assertWarmedUpAndBetter(run: RunRecord, warmUpSteps: number) {
  const fromBase = assertWarmedUp(run, warmUpSteps);
  const base = fromBase.evalFailureRate;
  const final = run.metrics.heldOutFailureRate;
  assert.equal(
    typeof base,
    "number",
    `the warm-up judged the base on held-out tasks: ${JSON.stringify(fromBase)}`,
  );
  assert.equal(
    typeof final,
    "number",
    `the run judged its candidate on held-out tasks: ${JSON.stringify(run.metrics)}`,
  );
  assert.ok((final as number) < (base as number), `held-out failure rate ${base} (base) -> ${final}`);
}

/**
 * The whole loop for families Arc has never seen. Their traffic goes through the gateway to the shipped toolcall
 * base model (which knows JSON tool calls but not these tools), the family's verifier finds the failures, a reviewer
 * corrects them through the feedback API, the orchestrator trains the family the failures belong to (SFT on the
 * corrections, then semi-online DPO scored by the family's verifier), the validator judges the candidate with that
 * verifier, and the deployer ramps it through a canary to production.
 */
describe("families Arc has never seen, from production traffic to a release", () => {
  let home: string;
  let server: RunningServer;
  let unitconv: TaskFamily;
  let unitconvTasks: Task[];
  const supportTasks = refundTasks(400);

  before(async () => {
    home = await mkdtemp(join(tmpdir(), "arc-outside-family-"));
    // as `arc --family <path> serve` does: loaded by path, and named to the training processes it starts
    process.env.ARC_FAMILIES = FAMILY;
    await loadTaskFamilies([FAMILY]);
    unitconv = taskFamilies.get("unitconv");
    unitconvTasks = generateTasks(unitconv, { split: "production", seed: 4, count: 600 });
    // the tenants' solution resolver (ARC_DETECTORS_MODULE in production): gateway traffic carries no reference
    const solutions = solutionsByQuestion([...unitconvTasks, ...supportTasks]);
    const registry = (r: DetectorRegistry) => r.resolveSolutionsWith(solutions);
    server = await startServer(loadServerConfig({}, { home, port: 0 }), {
      failures: { setupRegistry: registry },
      release: {
        registryFor: () => registry(new DetectorRegistry()),
        validatorIntervalMs: 300,
        deployerIntervalMs: 200,
        judge: { maxTokens: 96 },
      },
      orchestrator: {
        enabled: true,
        minNewFailures: 80,
        intervalMs: 300,
        pollMs: 300,
        datasetSize: 128,
        recipe: "recipes/corrections-dpo.yaml",
        overrides: TRAINING,
      },
    });
  });
  after(async () => {
    await server?.close();
    delete process.env.ARC_FAMILIES;
    await rm(home, { recursive: true, force: true });
  });

  /** A tenant with the shipped toolcall base in production and gates for a base that answers none of its tasks. */
  async function tenantOnToolcallBase(tenantId: string, canary: Record<string, unknown>) {
    const base = await registerModelVersion(server.db, tenantId, {
      name: "toolcall-base",
      status: "promoted",
      artifactDir: resolve("models/toolcall-base"),
      actor: "test",
    });
    // any candidate that answers some of the family's tasks is worth a canary; a run this short answers a few percent
    await setReleaseSettings(server.db, tenantId, { gates: { minFunctional: 0.02 }, canary });
    return base;
  }

  it("a module family registered by path: trained on its corrections then by DPO, validated and promoted", async () => {
    const { db } = server;
    const credentials = server.credentials;
    assert.ok(credentials);
    const tenant = await findTenant(db, credentials.tenant);
    assert.ok(tenant);
    const tenantId = tenant.id;
    const base = await tenantOnToolcallBase(tenantId, {
      ramp: [0.5, 1],
      minSamplesPerStage: 10,
      minControlSamples: 10,
    });
    const converse = reviewedAgent(server, credentials.tenantKey, unitconv, unitconvTasks);
    const trained = await trainedRun(db, tenantId, converse);
    assert.deepEqual(trained.overrides, [...TRAINING, "data.env=unitconv"]);
    assert.equal(trained.step, 4);
    assertWarmedUpAndBetter(trained, WARM_UP_STEPS);

    // the validator judges the candidate with the family's verifier; the canary needs live traffic
    await waitUntil(
      async () => {
        const [validation] = await listValidations(db, tenantId, trained.candidateId);
        if (validation?.decision === "fail") return true;
        const [deployment] = await listDeployments(db, tenantId, 1);
        if (deployment && deployment.status !== "canary") return true;
        if (deployment) await Promise.all([converse(), converse(), converse(), converse()]);
        return false;
      },
      "the validator's and the deployer's decisions",
      { timeoutMs: 300_000, intervalMs: 200 },
    );
    const [validation] = await listValidations(db, tenantId, trained.candidateId);
    assert.equal(validation.decision, "pass", validation.report.reasons.join("; "));
    assert.equal(validation.report.scores.baselineFunctional, 0);
    assert.ok(validation.report.scores.functional > 0, `functional ${validation.report.scores.functional}`);
    for (const slice of validation.report.slices.filter((s) => s.kind === "pattern" || s.kind === "general"))
      assert.deepEqual(Object.keys(slice.judgedBy), ["verifier:unitconv"], slice.slice);
    const [deployment] = await listDeployments(db, tenantId, 1);
    assert.equal(deployment.status, "promoted", JSON.stringify(deployment.lastStep));
    const [production] = await listModelVersions(db, tenantId, ["promoted"]);
    assert.equal(production.id, trained.candidateId);
    assert.equal(production.parentId, base.id);

    // and Arc's code never names the family
    const naming = filesUnder("packages").filter((f) => readFileSync(f, "utf8").includes("unit-convert"));
    assert.deepEqual(naming, []);
  });

  it("a JSON family a tenant registered through the API: trained on its corrections and validated by its checks", async () => {
    const { db } = server;
    const tenant = await createTenant(db, "support-team");
    const { key } = await createApiKey(db, { role: "tenant", tenantId: tenant.id });
    await tenantOnToolcallBase(tenant.id, { autoStart: false });
    const put = await fetch(`${server.url}/v1/task-families/support`, {
      method: "PUT",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(SUPPORT_FAMILY_SPEC),
    });
    assert.equal(put.status, 201, await put.text());
    const support = jsonTaskFamily(SUPPORT_FAMILY_SPEC);
    const trained = await trainedRun(db, tenant.id, reviewedAgent(server, key, support, supportTasks));
    // no generator: the run has no generated held-out tasks, so it is judged against the base by the validator alone,
    // on the tenant's EvalSet (below)
    assert.deepEqual(trained.overrides, [...TRAINING, "data.env=support", "data.evalCount=0"]);
    assertWarmedUp(trained, WARM_UP_STEPS);
    const validation = await waitUntil(
      async () => (await listValidations(db, tenant.id, trained.candidateId))[0],
      "the validator's decision",
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    assert.equal(validation.decision, "pass", validation.report.reasons.join("; "));
    assert.equal(validation.report.scores.baselineFunctional, 0);
    assert.ok(validation.report.scores.functional > 0, `functional ${validation.report.scores.functional}`);
    for (const slice of validation.report.slices.filter((s) => s.kind === "pattern" || s.kind === "general"))
      assert.deepEqual(Object.keys(slice.judgedBy), ["verifier:support"], slice.slice);
    // the validation is stored before the version's status moves on: wait for the move
    const candidate = await waitUntil(
      async () =>
        (await listModelVersions(db, tenant.id)).find(
          (m) => m.id === trained.candidateId && m.status !== "candidate",
        ),
      "the candidate's status after its validation",
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    assert.equal(candidate.status, "validated");
  });
});
