import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  DetectorRegistry,
  generateTasks,
  solutionsByQuestion,
  type Task,
  type TaskFamily,
  taskFamilies,
  toOpenAiTools,
} from "@arc/core";
import { waitUntil } from "@arc/core/testing";
import { loadTaskFamilies } from "@arc/rl";
import OpenAI from "openai";
import { loadServerConfig } from "../packages/server/src/config/server-config.ts";
import { listDeployments } from "../packages/server/src/deploy/deployment-store.ts";
import { setReleaseSettings } from "../packages/server/src/deploy/release-settings.ts";
import { listRuns } from "../packages/server/src/orchestrator/run-store.ts";
import { type RunningServer, startServer } from "../packages/server/src/serve/start-server.ts";
import { listModelVersions, registerModelVersion } from "../packages/server/src/store/model-registry.ts";
import { findTenant } from "../packages/server/src/store/tenants.ts";
import { listValidations } from "../packages/server/src/validate/validate-candidate.ts";

const FAMILY = resolve("examples/unit-convert/family.ts");

/** Every file under `dir` (node_modules left out). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === "node_modules") return [];
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/** A returned tool call as the family's verifier reads one; arguments that are not JSON stay as they came. */
function toolCallText(call: { name: string; arguments: string }): string {
  try {
    return JSON.stringify({ tool: call.name, args: JSON.parse(call.arguments) });
  } catch {
    return call.arguments;
  }
}

/**
 * The whole loop for a family Arc has never seen: the unit-conversion agent of examples/unit-convert, registered by
 * path. Its traffic goes through the gateway to the shipped toolcall base model (which knows JSON tool calls but not
 * this tool), the family's verifier finds the failures, a reviewer corrects them through the feedback API, the
 * orchestrator trains the family the failures belong to (SFT on the corrections, then semi-online DPO scored by the
 * family's verifier), the validator judges the candidate with that verifier, and the deployer ramps it through a
 * canary to production.
 */
describe("an outside task family, from production traffic to a promoted model", () => {
  let home: string;
  let server: RunningServer;
  let family: TaskFamily;
  let tasks: Task[];

  before(async () => {
    home = await mkdtemp(join(tmpdir(), "arc-outside-family-"));
    // as `arc --family <path> serve` does: loaded by path, and named to the training processes it starts
    process.env.ARC_FAMILIES = FAMILY;
    await loadTaskFamilies([FAMILY]);
    family = taskFamilies.get("unitconv");
    tasks = generateTasks(family, { split: "production", seed: 4, count: 600 });
    // the tenant's solution resolver (ARC_DETECTORS_MODULE in production): gateway traffic carries no reference
    const registry = (r: DetectorRegistry) => r.resolveSolutionsWith(solutionsByQuestion(tasks));
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
        overrides: ["trainer.steps=10", "data.evalCount=16"],
      },
    });
  });
  after(async () => {
    await server?.close();
    delete process.env.ARC_FAMILIES;
    await rm(home, { recursive: true, force: true });
  });

  it("is trained on its corrections, then by DPO on its verifier, validated by it and promoted through a canary", async () => {
    const { db } = server;
    const credentials = server.credentials;
    assert.ok(credentials);
    const tenant = await findTenant(db, credentials.tenant);
    assert.ok(tenant);
    const tenantId = tenant.id;
    const base = await registerModelVersion(db, tenantId, {
      name: "toolcall-base",
      status: "promoted",
      artifactDir: resolve("models/toolcall-base"),
      actor: "test",
    });
    // the base answers none of this family's tasks, so any candidate that answers some is worth a canary
    await setReleaseSettings(db, tenantId, {
      gates: { minFunctional: 0.05 },
      canary: { ramp: [0.5, 1], minSamplesPerStage: 10, minControlSamples: 10 },
    });

    const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: credentials.tenantKey });
    const tools = toOpenAiTools(family.tools ?? []) as unknown as OpenAI.ChatCompletionTool[];
    let sent = 0;
    /** One request of the agent, reviewed: a wrong answer gets the right tool call as a correction. */
    const converse = async () => {
      const task = tasks[sent % tasks.length];
      const traceId = `uc-${sent++}`;
      const reply = await openai.chat.completions.create(
        {
          model: "arc",
          messages: [{ role: "user", content: task.question }],
          tools,
          temperature: 0,
          max_tokens: 96,
        },
        { headers: { "x-arc-env": "unitconv", "x-arc-trace-id": traceId } },
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
          headers: { authorization: `Bearer ${credentials.tenantKey}`, "content-type": "application/json" },
          body: JSON.stringify(correction),
        });
        if (res.status !== 404) assert.equal(res.status, 200, await res.text());
        return res.status === 200;
      }, `trace ${traceId} to take feedback`);
    };

    // production traffic on the base model until the orchestrator has a run going
    await waitUntil(
      async () => {
        await converse();
        return (await listRuns(db, tenantId)).length > 0;
      },
      "the orchestrator to start a run",
      { timeoutMs: 120_000, intervalMs: 0 },
    );
    const [run] = await listRuns(db, tenantId);
    assert.deepEqual(run.overrides, ["trainer.steps=10", "data.evalCount=16", "data.env=unitconv"]);
    await waitUntil(
      async () => ["succeeded", "failed", "cancelled"].includes((await listRuns(db, tenantId))[0].status),
      "the run to end",
      { timeoutMs: 240_000, intervalMs: 500 },
    );
    const [trained] = await listRuns(db, tenantId);
    assert.equal(trained.status, "succeeded", trained.error ?? "");
    assert.deepEqual(trained.datasets.map((d) => d.kind).sort(), ["eval", "preferences", "prompts"]);
    assert.ok(trained.candidateId);

    // the validator judges the candidate with the family's verifier; the canary needs live traffic
    await waitUntil(
      async () => {
        const [validation] = await listValidations(db, tenantId, trained.candidateId as string);
        if (validation?.decision === "fail") return true;
        const [deployment] = await listDeployments(db, tenantId, 1);
        if (deployment && deployment.status !== "canary") return true;
        if (deployment) for (let i = 0; i < 4; i++) await converse();
        return false;
      },
      "the validator's and the deployer's decisions",
      { timeoutMs: 300_000, intervalMs: 200 },
    );
    const [validation] = await listValidations(db, tenantId, trained.candidateId);
    assert.equal(validation.decision, "pass", validation.report.reasons.join("; "));
    const { scores } = validation.report;
    assert.equal(scores.baselineFunctional, 0);
    assert.ok(scores.functional > 0, `functional ${scores.functional}`);
    // the run: its SFT warm-up, then DPO from the warm-up's checkpoint, better than the base on held-out tasks
    const warmUp = join(trained.runsDir, trained.id, "sft-warm-up");
    const warmState = JSON.parse(readFileSync(join(warmUp, "state.json"), "utf8"));
    assert.deepEqual([warmState.status, warmState.step, trained.step], ["completed", 150, 10]);
    const [fromBase] = readFileSync(join(warmUp, "metrics.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.ok(
      (trained.metrics.heldOutFailureRate as number) < fromBase.evalFailureRate,
      `held-out failure rate ${fromBase.evalFailureRate} (base) -> ${trained.metrics.heldOutFailureRate}`,
    );
    const [deployment] = await listDeployments(db, tenantId, 1);
    assert.equal(deployment.status, "promoted", JSON.stringify(deployment.lastStep));
    const [production] = await listModelVersions(db, tenantId, ["promoted"]);
    assert.equal(production.id, trained.candidateId);
    assert.equal(production.parentId, base.id);

    // and Arc's code never names the family
    const naming = filesUnder("packages").filter((f) => readFileSync(f, "utf8").includes("unit-convert"));
    assert.deepEqual(naming, []);
  });
});
