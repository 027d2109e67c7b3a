/**
 * Runs whose rollouts are sampled by an inference server in another process (`arc engine serve
 * --allow-weight-updates`, standing in for vLLM or SGLang): token ids and log-probs over vLLM's `/v1/completions` or
 * SGLang's `/generate`, and the policy pushed to the server as checkpoint directories or LoRA adapters.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parseRecipe } from "../recipe/index.ts";
import { engineFactory } from "../worker/index.ts";
import { assertStalenessUpToOne } from "./__fixtures__/bounded-staleness.ts";
import { writeTinyModel } from "./__fixtures__/tiny-model.ts";
import { startRun } from "./run-training.ts";
import type { StepRecord } from "./run-types.ts";

const arc = fileURLToPath(new URL("../../../../bin/arc.mjs", import.meta.url));
const rewardModule = fileURLToPath(new URL("./__fixtures__/digit-reward.ts", import.meta.url));

const mean = (records: StepRecord[]) => records.reduce((a, r) => a + (r.reward ?? 0), 0) / records.length;

/** `arc engine serve` in a child process, and its base URL once it listens. */
async function serve(model: string, flags: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [arc, "engine", "serve", "--model", model, ...flags, "--port", "0"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = "";
    const read = (d: Buffer) => {
      seen += d;
      const m = seen.match(/at (http:\/\/\S+\/v1)/);
      if (m) resolve(m[1]);
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
    child.on("exit", (code) => reject(new Error(`arc engine serve exited with ${code}: ${seen}`)));
  });
  return { child, url };
}

/** The weight version the server samples with now. */
async function servedVersion(url: string): Promise<number> {
  const res = await fetch(`${url}/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "model", prompt: [1, 2, 3], max_tokens: 1, return_weight_versions: true }),
  });
  return (await res.json()).choices[0].weight_versions[0];
}

describe("runs sampling on an inference server over HTTP", () => {
  let root: string;
  let model: string;
  let server: { child: ChildProcess; url: string };
  let loraServer: { child: ChildProcess; url: string };

  before(async () => {
    root = await mkdtemp(join(tmpdir(), "arc-remote-run-"));
    model = await writeTinyModel(join(root, "model"));
    [server, loraServer] = await Promise.all([
      serve(model, ["--allow-weight-updates"]),
      serve(model, ["--enable-lora", "--max-loras", "2"]),
    ]);
  });
  after(() => {
    server?.child.kill("SIGINT");
    loraServer?.child.kill("SIGINT");
  });

  const recipe = (trainer: Record<string, unknown>) =>
    parseRecipe({
      name: "tiny-remote",
      model: { path: model },
      generator: { url: server.url },
      data: { env: "toolcall", split: "train", count: 32, evalCount: 0 },
      trainer: { steps: 10, promptsPerStep: 4, samplesPerPrompt: 4, maxTokens: 8, ...trainer },
      reward: { module: rewardModule },
    });

  it("trains semi-online DPO on the server's samples, pushing the policy every syncInterval steps", async () => {
    const result = await startRun(
      recipe({ algorithm: "dpo", learningRate: 1e-2, syncInterval: 2, checkpointEvery: 10 }),
      { runsDir: join(root, "runs"), factory: engineFactory },
    );
    assert.equal(result.status, "completed");
    const steps = result.records.filter((r) => r.step > 0);
    assert.deepEqual(
      [...new Set(steps.map((r) => r.generatorStep))],
      [0, 2, 4, 6, 8],
      "the generator holds the policy of every second step",
    );
    assert.ok(mean(steps.slice(-3)) > mean(steps.slice(0, 3)) + 0.1, "reward did not improve");
    assert.ok((await servedVersion(server.url)) >= 8);
  });

  it("trains decoupled GRPO on asynchronous rollouts from SGLang's /generate, none staler than maxStaleness", async () => {
    const grpo = recipe({
      algorithm: "grpo",
      learningRate: 2e-2,
      asyncRollouts: true,
      maxStaleness: 1,
      decoupled: true,
    });
    const result = await startRun(parseRecipe({ ...grpo, generator: { url: server.url, api: "sglang" } }), {
      runsDir: join(root, "runs"),
      factory: engineFactory,
    });
    assert.equal(result.status, "completed");
    const steps = result.records.filter((r) => r.step > 0);
    assert.equal(steps.length, 10);
    assertStalenessUpToOne(steps);
    assert.equal(await servedVersion(server.url), 10);
  });

  it("pushes each policy as a LoRA adapter through vLLM's /v1/load_lora_adapter, and samples by its name", async () => {
    const lora = parseRecipe({
      ...recipe({ algorithm: "grpo", learningRate: 5e-2, asyncRollouts: true, maxStaleness: 1, steps: 6 }),
      engine: { lora: { rank: 4, alpha: 8, targets: ["q_proj", "v_proj", "up_proj"] } },
      generator: { url: loraServer.url, weightSync: "lora" },
    });
    const listed = async () =>
      (await (await fetch(`${loraServer.url}/models`)).json()).data.map(
        (m: { id: string }) => m.id,
      ) as string[];
    // what the server holds after each step: the served model, the two newest adapters and one still loading (the
    // oldest is unloaded once the newest has loaded)
    const seen: string[][] = [];
    const result = await startRun(lora, {
      runsDir: join(root, "runs"),
      factory: engineFactory,
      hooks: {
        async onStep(r) {
          if (r.step > 0) seen.push(await listed());
        },
      },
    });
    assert.equal(result.status, "completed");
    const steps = result.records.filter((r) => r.step > 0);
    assert.equal(steps.length, 6);
    assertStalenessUpToOne(steps);
    assert.ok(
      seen.every(
        (ids) =>
          ids[0] === "model" && ids.length <= 4 && ids.slice(1).every((id) => /^model-\w+-v\d$/.test(id)),
      ),
      JSON.stringify(seen),
    );
    const versions = new Set(
      seen
        .flat()
        .filter((id) => id !== "model")
        .map((id) => Number(id.split("-v")[1])),
    );
    assert.ok(versions.size >= 4, `adapters of versions ${[...versions]} were loaded`);
    // the run unloads what it loaded once it ends
    assert.deepEqual(await listed(), ["model"]);
  });

  it("refuses LoRA pushes when the run trains no adapters", async () => {
    const whole = parseRecipe({
      ...recipe({ algorithm: "grpo", steps: 2 }),
      generator: { url: loraServer.url, weightSync: "lora" },
    });
    await assert.rejects(
      startRun(whole, { runsDir: join(root, "runs"), factory: engineFactory }),
      /generator.weightSync: lora pushes LoRA adapters; set engine.lora to train them/,
    );
    const sglangLora = parseRecipe({
      ...recipe({ algorithm: "grpo", steps: 2 }),
      engine: { lora: { rank: 4, alpha: 8 } },
      generator: { url: loraServer.url, weightSync: "lora", api: "sglang" },
    });
    await assert.rejects(
      startRun(sglangLora, { runsDir: join(root, "runs"), factory: engineFactory }),
      /generator.api: sglang takes weightSync disk/,
    );
  });
});
