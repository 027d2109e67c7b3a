import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { GenRequest } from "@arc/core";
import { generateOrderdeskTasks, type OrderdeskSolution, orderdeskFamily } from "@arc/core/families";
import { grpoBatch } from "../algo/grpo-batch.ts";
import { evaluate } from "../eval/index.ts";
import { parseRecipe } from "../recipe/index.ts";
import { buildReward } from "../run/build-reward.ts";
import { startRun } from "../run/run-training.ts";
import { asyncRolloutSource, engineFactory } from "../worker/index.ts";
import { ScriptedInferenceEngine } from "../workflow/__fixtures__/scripted-inference-engine.ts";
import { rolloutSeed, sampleGroups } from "./sample-groups.ts";

/** The workflow of a parsed DPO or GRPO recipe. */
function trainerWorkflow(recipe: ReturnType<typeof parseRecipe>): string | undefined {
  return recipe.trainer.algorithm === "sft" ? undefined : recipe.trainer.workflow;
}

const tasks = generateOrderdeskTasks({ split: "train", seed: 9, count: 40 })
  .filter((t) => t.meta?.action === "refund_order")
  .slice(0, 2);

/**
 * TEST DOUBLE of a policy on the order desk: looks the order up, then refunds it in full when its sampling seed is
 * even and refunds 1 when odd, so a group's episodes differ in reward.
 */
function deskPolicy(request: GenRequest): string {
  const last = request.messages?.at(-1);
  const solution = tasks.find((t) => t.question === request.messages?.[0]?.content)
    ?.solution as OrderdeskSolution;
  if (last?.role === "user") return orderdeskFamily.reference({ ...tasks[0], solution })[0];
  const order = JSON.parse(String(last?.content ?? "{}"));
  const amount = (request.seed ?? 0) % 2 === 0 ? order.total : 1;
  return JSON.stringify({ tool: "refund_order", args: { order_id: order.id, amount } });
}

describe("multi-turn GRPO groups", () => {
  it("samples n episodes per task and trains every turn with its episode's advantage", async () => {
    const engine = new ScriptedInferenceEngine(deskPolicy);
    const groups = await sampleGroups(engine, tasks, {
      n: 4,
      temperature: 1,
      maxTokens: 96,
      seedOf: (task) => rolloutSeed(1, task, 0) & ~1,
      reward: (await buildReward({ ...parseRecipe({}).reward, kind: "verifier" })).reward,
      workflow: "multi-turn",
    });
    assert.equal(groups.length, 2);
    for (const group of groups) {
      assert.deepEqual(
        group.episodes?.map((e) => e.length),
        [2, 2, 2, 2],
      );
      assert.deepEqual(group.passed, [true, false, true, false]);
      assert.ok(group.rewards[0] > group.rewards[1]);
      assert.equal(group.samples[1], group.episodes?.[1][1]);
    }
    const { batch } = grpoBatch(groups, "grpo", false);
    assert.equal(batch.promptTokens.length, 2 * 4 * 2);
    const advantages = batch.advantages ?? [];
    for (let row = 0; row < advantages.length; row += 2) assert.equal(advantages[row], advantages[row + 1]);
    assert.ok(advantages[0] > 0 && advantages[2] < 0);
  });

  it("judges a multi-turn family's held-out tasks on whole episodes, not their first turn", async () => {
    const greedy = new ScriptedInferenceEngine((request) => deskPolicy({ ...request, seed: 0 }));
    const result = await evaluate(greedy, tasks);
    assert.deepEqual(result.passed, [true, true]);
    assert.equal(greedy.requests.length, 4);
  });

  it("lets DPO and GRPO recipes of a family with a session choose multi-turn episodes", () => {
    const recipe = (data: object, trainer: object) => () =>
      parseRecipe({ data, trainer: { workflow: "multi-turn", ...trainer } });
    assert.equal(trainerWorkflow(recipe({ env: "orderdesk" }, { algorithm: "dpo" })()), "multi-turn");
    assert.equal(trainerWorkflow(parseRecipe({ data: { env: "orderdesk" } })), "multi-turn");
    assert.equal(trainerWorkflow(parseRecipe({ data: { env: "arith" } })), "single-turn");
    assert.throws(
      recipe({ env: "orderdesk" }, { algorithm: "dpo", workflow: "single-turn" }),
      /trainer\.workflow: the "orderdesk" family is multi-turn \(its verifier judges whole episodes, never one answer\)/,
    );
    assert.throws(
      recipe({ env: "toolcall" }, { algorithm: "grpo" }),
      /trainer.workflow: the "toolcall" family has no multi-turn session/,
    );
    assert.equal(trainerWorkflow(recipe({ env: "orderdesk" }, { algorithm: "grpo" })()), "multi-turn");
  });

  it("runs an order-desk GRPO recipe with multi-turn episodes on the embedded engine, in the trainer thread and a worker", async () => {
    const root = await mkdtemp(join(tmpdir(), "arc-multiturn-"));
    const recipe = parseRecipe({
      name: "orderdesk-grpo",
      model: { path: "models/orderdesk-base" },
      data: { env: "orderdesk", split: "train", count: 8, evalCount: 4 },
      trainer: {
        algorithm: "grpo",
        workflow: "multi-turn",
        steps: 2,
        promptsPerStep: 2,
        samplesPerPrompt: 2,
        maxTokens: 48,
        evalEvery: 2,
        checkpointEvery: 2,
      },
    });
    const result = await startRun(recipe, { runsDir: join(root, "runs"), factory: engineFactory });
    assert.equal(result.status, "completed");
    const last = result.records.at(-1);
    assert.equal(last?.step, 2);
    assert.equal(typeof last?.evalFailureRate, "number");
    const async = await startRun(
      parseRecipe({ ...recipe, trainer: { ...recipe.trainer, asyncRollouts: true, maxStaleness: 1 } }),
      { runsDir: join(root, "runs"), factory: engineFactory, asyncSource: asyncRolloutSource },
    );
    assert.equal(async.status, "completed");
    assert.ok(async.records.filter((r) => r.step > 0).every((r) => r.tokens > 0));
  });
});
