import assert from "node:assert/strict";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { Objective, StepMetrics } from "@arc/core";
import { tf } from "../backend/tf-backend.ts";
import { readHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import type { NamedTensor } from "../checkpoint/safetensors.ts";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { renderChatExample } from "../tokenizer/chat-template.ts";
import { EmbeddedTrainEngine } from "./embedded-train-engine.ts";

const tiny = configForSize("tiny");
const chats = [
  ["hi", "hello!"],
  ["what is 2+2?", "4"],
  ["color of the sky?", "blue"],
  ["your name?", "arc"],
  ["say yes", "yes"],
  ["capital of france?", "paris"],
];
const examples = chats.map(([q, a]) => renderChatExample([{ role: "user", content: q }], a));
const batch = {
  promptTokens: examples.map((e) => e.promptTokens),
  outputTokens: examples.map((e) => e.outputTokens),
};

/** Uneven rows, so that micro-batches and shards differ in length and loss tokens. */
const ragged = {
  promptTokens: batch.promptTokens,
  outputTokens: batch.outputTokens.map((o, i) => [...o, ...Array(i).fill(70)]),
};
/** One GRPO advantage per row of `ragged`. */
const advantages = [1, -1, 0.5, -0.5, 1, -0.25];

/** Asserts that two engines' steps on the same batch gave the same loss, gradient norm and figures. */
function assertSameStep(a: StepMetrics, b: StepMetrics, label: string): void {
  assert.ok(
    Math.abs(a.loss - b.loss) < 1e-5 * Math.max(1, Math.abs(a.loss)),
    `${label}: ${a.loss} vs ${b.loss}`,
  );
  assert.ok(
    Math.abs(a.gradNorm - b.gradNorm) < 1e-4 * a.gradNorm,
    `${label}: ${a.gradNorm} vs ${b.gradNorm}`,
  );
  assert.deepEqual(Object.keys(b.extra).sort(), Object.keys(a.extra).sort());
  for (const [k, v] of Object.entries(a.extra))
    assert.ok(
      Math.abs(v - b.extra[k]) < 1e-4 * Math.max(1, Math.abs(v)),
      `${label} ${k}: ${v} vs ${b.extra[k]}`,
    );
}

/** Asserts that two engines hold the same weights to 1e-5. */
function assertSameWeights(a: EmbeddedTrainEngine, b: EmbeddedTrainEngine, label: string): void {
  const want = a.exportTensors();
  for (const [name, t] of b.exportTensors()) {
    const worst = t.data.reduce((m, x, i) => Math.max(m, Math.abs(x - want.get(name)!.data[i])), 0);
    assert.ok(worst < 1e-5, `${label}, ${name}: ${worst}`);
  }
}

describe("EmbeddedTrainEngine", () => {
  it("memorizes a small chat set with a few hundred SFT steps", async () => {
    const trainer = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 1), {
      learningRate: 3e-3,
      warmupSteps: 10,
    });
    let last = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 200; i++) last = (await trainer.step(batch, { kind: "sft" })).loss;
    assert.ok(last < 0.05, `final loss ${last}`);
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 99), { version: 0 });
    await engine.setWeights(1, trainer.weights());
    const out = await engine.generate(
      chats.map(([q]) => ({ messages: [{ role: "user", content: q }], temperature: 0, maxTokens: 16 })),
    );
    assert.deepEqual(
      out.map((r) => r.text),
      chats.map(([, a]) => a),
    );
    assert.ok(out.every((r) => r.finishReason === "stop" && r.outputVersions.every((v) => v === 1)));
    // what the trainer scores is what the sampler reports
    const lp = await trainer.logprobs({
      promptTokens: [out[0].promptTokens],
      outputTokens: [out[0].outputTokens],
    });
    for (const [i, x] of lp[0].entries()) assert.ok(Math.abs(x - out[0].outputLogprobs[i]) < 1e-3);
  });

  it("saves and loads weights and optimizer state bit-exactly, so training continues identically", async () => {
    const a = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 2), {
      learningRate: 1e-3,
      warmupSteps: 5,
      weightDecay: 0.01,
    });
    for (let i = 0; i < 3; i++) await a.step(batch, { kind: "sft" });
    const dir = await mkdtemp(join(tmpdir(), "arc-train-"));
    await a.save(dir);
    const b = await EmbeddedTrainEngine.resume(dir);
    assert.equal(b.getStep(), 3);
    const wa = a.exportTensors();
    for (const [name, t] of b.exportTensors()) assert.deepEqual(t.data, wa.get(name)!.data, name);
    const ma = await a.step(batch, { kind: "dpo", beta: 0.1, loss: "sigmoid" });
    const mb = await b.step(batch, { kind: "dpo", beta: 0.1, loss: "sigmoid" });
    assert.equal(mb.loss, ma.loss);
    assert.equal(mb.learningRate, ma.learningRate);
    const after = a.exportTensors();
    for (const [name, t] of b.exportTensors()) assert.deepEqual(t.data, after.get(name)!.data, name);
  });

  it("starts a new trainer from a saved run's weights with its own settings, not the saved training state", async () => {
    const a = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 2), {
      learningRate: 1e-3,
      warmupSteps: 5,
    });
    for (let i = 0; i < 3; i++) await a.step(batch, { kind: "sft" });
    const dir = await mkdtemp(join(tmpdir(), "arc-train-"));
    await a.save(dir);
    const b = await EmbeddedTrainEngine.fromCheckpoint(dir, { learningRate: 2e-4 });
    assert.equal(b.getStep(), 0);
    const wa = a.exportTensors();
    for (const [name, t] of b.exportTensors()) assert.deepEqual(t.data, wa.get(name)!.data, name);
    const m = await b.step(batch, { kind: "sft" });
    assert.equal(m.learningRate, 2e-4);
    // the reference model is the weights it started from, not the saved run's reference
    const fresh = await EmbeddedTrainEngine.fromCheckpoint(dir);
    const dpo = await fresh.step(batch, { kind: "dpo", beta: 0.1, loss: "sigmoid" });
    assert.ok(Math.abs(dpo.loss - Math.log(2)) < 1e-5, `DPO loss at the reference is log 2, got ${dpo.loss}`);
  });

  it("raises DPO reward accuracy and keeps GRPO ratios at 1 on-policy", async () => {
    const trainer = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 4), { learningRate: 2e-3 });
    const first = await trainer.step(batch, { kind: "dpo", beta: 0.5, loss: "ipo" });
    let m = first;
    for (let i = 0; i < 20; i++) m = await trainer.step(batch, { kind: "dpo", beta: 0.5, loss: "ipo" });
    assert.ok(m.loss < first.loss, `${m.loss} !< ${first.loss}`);
    assert.equal(m.extra.rewardAccuracy, 1);
    const g = await trainer.step(
      { ...batch, advantages: [1, -1, 1, -1, 1, -1] },
      { kind: "grpo", clipEpsilon: 0.2, klCoef: 0.05, entropyCoef: 0, aggregation: "sequence" },
    );
    assert.ok(Math.abs(g.extra.ratio - 1) < 1e-5);
    assert.ok(g.extra.kl > 0);
    await assert.rejects(trainer.step(batch, { kind: "grpo" }), /batch\.advantages/);
  });

  it("lowers the chosen responses' NLL under DPO with nllCoef, and reports the entropy it regularizes", async () => {
    const trainer = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 5), { learningRate: 2e-3 });
    const objective = { kind: "dpo", beta: 0.1, loss: "sigmoid", nllCoef: 1, entropyCoef: 0.01 } as const;
    const first = await trainer.step(batch, objective);
    let m = first;
    for (let i = 0; i < 10; i++) m = await trainer.step(batch, objective);
    assert.ok(m.extra.chosenNll < first.extra.chosenNll, `${m.extra.chosenNll} !< ${first.extra.chosenNll}`);
    assert.ok(Number.isFinite(m.extra.entropy) && m.extra.entropy > 0, `entropy ${m.extra.entropy}`);
  });

  it("steps the decoupled GRPO objective with the current policy as the proximal one", async () => {
    const trainer = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 4), { learningRate: 2e-3 });
    const advantages = [1, -1, 1, -1, 1, -1];
    const stepWithCap = async (cap: number) => {
      const current = await trainer.logprobs(batch);
      const behaviour = current.map((row) => Array.from(row, (x) => x - Math.log(2))); // pi_prox / pi_behaviour = 2
      return trainer.step(
        { ...batch, advantages, oldLogprobs: behaviour },
        { kind: "grpo", decoupled: true, behaviourWeightCap: cap },
      );
    };
    const m = await stepWithCap(5);
    assert.ok(Math.abs(m.extra.ratio - 1) < 1e-5);
    assert.ok(Math.abs(m.extra.behaviourWeight - 2) < 1e-3);
    assert.equal((await stepWithCap(1.5)).extra.behaviourWeight, 0);
    await assert.rejects(
      trainer.step({ ...batch, advantages }, { kind: "grpo", decoupled: true }),
      /batch\.oldLogprobs/,
    );
  });

  it("takes the old (or proximal) policy from the step's own forward pass, with no gradient through it", async () => {
    const advantages = [1, -1, 0.5, -0.5, 1, -1];
    for (const decoupled of [true, false]) {
      const given = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 6), { learningRate: 2e-3 });
      const implied = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 6), { learningRate: 2e-3 });
      const current = (await given.logprobs(batch)).map((row) => Array.from(row));
      const behaviour = current.map((row) => row.map((x, i) => x - 0.1 * (i % 3)));
      const objective = { kind: "grpo", decoupled } as const;
      const [a, b] = decoupled
        ? [
            await given.step(
              { ...batch, advantages, oldLogprobs: behaviour, proximalLogprobs: current },
              objective,
            ),
            await implied.step({ ...batch, advantages, oldLogprobs: behaviour }, objective),
          ]
        : [
            await given.step({ ...batch, advantages, oldLogprobs: current }, objective),
            await implied.step({ ...batch, advantages }, objective),
          ];
      assert.ok(Math.abs(a.loss - b.loss) < 1e-5, `decoupled ${decoupled}: ${a.loss} vs ${b.loss}`);
      assert.ok(Math.abs(a.gradNorm - b.gradNorm) < 1e-4 * a.gradNorm, `${a.gradNorm} vs ${b.gradNorm}`);
      const after = given.exportTensors();
      for (const [name, t] of implied.exportTensors()) {
        const want = after.get(name)!.data;
        const worst = t.data.reduce((m, x, i) => Math.max(m, Math.abs(x - want[i])), 0);
        assert.ok(worst < 1e-5, `decoupled ${decoupled}, ${name}: ${worst}`);
      }
    }
  });

  it("splits a batch into micro-batches whose summed gradients give the whole batch's loss, figures and update", async () => {
    const objectives: Objective[] = [
      { kind: "sft" },
      { kind: "dpo", beta: 0.1, loss: "sigmoid", nllCoef: 0.5, entropyCoef: 0.01 },
      { kind: "grpo", klCoef: 0.1, entropyCoef: 0.01, aggregation: "token" },
      { kind: "grpo", aggregation: "sequence" },
      { kind: "grpo", aggregation: "dr-grpo" },
      { kind: "grpo", decoupled: true, behaviourWeightCap: 5 },
    ];
    for (const objective of objectives) {
      const whole = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 7), { learningRate: 1e-3 });
      const split = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 7), {
        learningRate: 1e-3,
        microBatchRows: 4,
      });
      const behaviour = (await whole.logprobs(ragged)).map((row) =>
        Array.from(row, (x, i) => x - 0.05 * (i % 2)),
      );
      const input = objective.kind === "grpo" ? { ...ragged, advantages, oldLogprobs: behaviour } : ragged;
      const a = await whole.step(input, objective);
      const b = await split.step(input, objective);
      const label = JSON.stringify(objective);
      assertSameStep(a, b, label);
      assertSameWeights(whole, split, label);
    }
    await assert.rejects(
      EmbeddedTrainEngine.create(tiny, initWeights(tiny, 7), { microBatchRows: 0 }),
      /microBatchRows: expected a positive integer, got 0/,
    );
  });

  it("trains data-parallel on worker threads with the same losses, figures and updates as one thread, step after step", async () => {
    const objectives: Objective[] = [
      { kind: "sft" },
      { kind: "dpo", beta: 0.1, loss: "sigmoid", nllCoef: 0.5, entropyCoef: 0.01 },
      { kind: "grpo", klCoef: 0.1, entropyCoef: 0.01, aggregation: "token" },
      { kind: "grpo", decoupled: true, behaviourWeightCap: 5 },
    ];
    for (const lora of [undefined, { rank: 2, alpha: 4 }]) {
      const options = { learningRate: 1e-3, lora };
      const one = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 11), options);
      const three = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 11), {
        ...options,
        trainThreads: 3,
      });
      try {
        // two rounds: the second checks that the workers were sent the weights (and reference) the first changed
        for (let round = 0; round < 2; round++) {
          for (const objective of objectives) {
            const behaviour = (await one.logprobs(ragged)).map((row) =>
              Array.from(row, (x, i) => x - 0.05 * (i % 2)),
            );
            const input =
              objective.kind === "grpo" ? { ...ragged, advantages, oldLogprobs: behaviour } : ragged;
            const a = await one.step(input, objective);
            const b = await three.step(input, objective);
            assertSameStep(a, b, `${JSON.stringify(objective)} lora ${lora !== undefined} round ${round}`);
          }
          await one.syncReference();
          await three.syncReference();
        }
        assertSameWeights(one, three, `lora ${lora !== undefined}`);
        // two workers, 8 steps: the base goes once a step without LoRA, once in all with it (it is frozen)
        const bytes = (tensors: Map<string, NamedTensor>) =>
          [...tensors.values()].reduce((a, t) => a + t.data.byteLength, 0);
        const traffic = three.workerTraffic();
        assert.equal(one.workerTraffic(), undefined);
        assert.equal(traffic?.params, 2 * bytes(initWeights(tiny, 11)) * (lora ? 1 : 8));
        assert.equal(traffic?.adapters === 0, lora === undefined);
      } finally {
        await three.close();
      }
    }
    await assert.rejects(
      EmbeddedTrainEngine.create(tiny, initWeights(tiny, 7), { trainThreads: 0 }),
      /trainThreads: expected a positive integer, got 0/,
    );
  });

  it("trains only LoRA adapters, and the merged export scores tokens as the unmerged adapters do", async () => {
    const initial = initWeights(tiny, 8);
    const trainer = await EmbeddedTrainEngine.create(tiny, initial, {
      learningRate: 1e-2,
      lora: { rank: 4, alpha: 8, targets: ["q_proj", "v_proj", "down_proj"] },
    });
    const first = await trainer.step(batch, { kind: "sft" });
    let last = first;
    for (let i = 0; i < 30; i++) last = await trainer.step(batch, { kind: "sft" });
    assert.ok(last.loss < first.loss * 0.9, `${last.loss} vs ${first.loss}`);
    const merged = trainer.exportTensors();
    for (const [name, t] of initial) {
      const adapted = /\.(q_proj|v_proj|down_proj)\.weight$/.test(name);
      assert.equal(
        merged.get(name)!.data.some((x, i) => x !== t.data[i]),
        adapted,
        name,
      );
    }
    const unmergedLp = await trainer.logprobs(batch);
    const mergedLp = await (await EmbeddedTrainEngine.create(tiny, merged)).logprobs(batch);
    unmergedLp.forEach((row, r) => {
      for (const [i, x] of row.entries())
        assert.ok(Math.abs(x - mergedLp[r][i]) < 1e-4, `row ${r} token ${i}`);
    });
  });

  it("saves and resumes LoRA training exactly", async () => {
    const options = { learningRate: 5e-3, lora: { rank: 2, alpha: 4 } };
    const a = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 9), options);
    for (let i = 0; i < 3; i++) await a.step(batch, { kind: "sft" });
    const dir = await mkdtemp(join(tmpdir(), "arc-lora-"));
    await a.save(dir);
    const b = await EmbeddedTrainEngine.resume(dir);
    const ma = await a.step(batch, { kind: "sft" });
    const mb = await b.step(batch, { kind: "sft" });
    assert.equal(mb.loss, ma.loss);
    const wa = a.exportTensors();
    for (const [name, t] of b.exportTensors()) assert.deepEqual(t.data, wa.get(name)!.data, name);
  });

  it("keeps the number of live tensors constant over repeated steps of every objective, in micro-batches too", async () => {
    const trainer = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 10), {
      lora: { rank: 2, alpha: 4 },
      microBatchRows: 2,
    });
    const pairs = {
      promptTokens: batch.promptTokens.slice(0, 4),
      outputTokens: batch.outputTokens.slice(0, 4),
    };
    const round = async () => {
      await trainer.step(pairs, { kind: "sft" });
      await trainer.step(
        { ...pairs, advantages: [1, -1, 1, -1] },
        { kind: "grpo", clipEpsilon: 0.2, klCoef: 0.1, entropyCoef: 0.01, aggregation: "token" },
      );
      await trainer.step(pairs, { kind: "dpo", beta: 0.1, loss: "sigmoid" });
      const behaviour = (await trainer.logprobs(pairs)).map((row) => Array.from(row, (x) => x - 0.1));
      await trainer.step(
        { ...pairs, advantages: [1, -1, 1, -1], oldLogprobs: behaviour },
        { kind: "grpo", decoupled: true, behaviourWeightCap: 5 },
      );
      trainer.weights();
      await trainer.syncReference();
    };
    await round();
    const before = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) await round();
    assert.equal(tf.memory().numTensors, before);
  });
});

describe("the embedded trainer's checkpoints of a model with its own tokenizer", () => {
  it("keep the BPE model's tokenizer, template and stop tokens, so the saved checkpoint talks as the model did", async () => {
    const source = fileURLToPath(new URL("../../../../models/toolcall-bpe", import.meta.url));
    const engine = await EmbeddedTrainEngine.fromCheckpoint(source, { learningRate: 1e-4 });
    const dir = await mkdtemp(join(tmpdir(), "arc-bpe-save-"));
    await engine.save(dir);
    await engine.close();
    for (const file of ["tokenizer.json", "tokenizer_config.json"])
      assert.equal(await readFile(join(dir, file), "utf8"), await readFile(join(source, file), "utf8"), file);
    const [saved, original] = await Promise.all([readHfCheckpoint(dir), readHfCheckpoint(source)]);
    assert.deepEqual(saved.eosTokenIds, original.eosTokenIds);
    const messages = [{ role: "user", content: "Weather in Oslo, in celsius?" }];
    const [fromSaved, fromOriginal] = await Promise.all(
      [dir, source].map(async (d) => {
        const inference = await EmbeddedInferenceEngine.load(d);
        const [answer] = await inference.generate([{ messages, maxTokens: 40, temperature: 0 }]);
        return answer.text;
      }),
    );
    assert.equal(fromSaved, fromOriginal);
  });
});
