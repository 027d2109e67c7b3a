/**
 * The torch engine's own contract, on a shipped model: checkpoints that resume exactly, LoRA, generation, named
 * errors, data-parallel training under torchrun (two CPU processes, gloo) equal to one process, and the worker's
 * smoke check and bench run from Python alone in bfloat16.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  type GenRequest,
  type GenResult,
  type InferenceEngine,
  type TokenEvent,
  type TrainBatch,
  taskPrompt,
} from "@arc/core";
import { generateToolcallTasks, toolcallFamily } from "@arc/core/families";
import { CheckpointError } from "../checkpoint/checkpoint-error.ts";
import { readHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import { type NamedTensor, readSafetensors } from "../checkpoint/safetensors.ts";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { renderChat, renderChatExample } from "../tokenizer/chat-template.ts";
import { byteChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { EmbeddedTrainEngine } from "../train/embedded-train-engine.ts";
import { torchUnavailable } from "./__fixtures__/torch-available.ts";
import { GenerationQueue } from "./generation-queue.ts";
import { TorchInferenceEngine } from "./torch-inference-engine.ts";
import { TorchTrainEngine } from "./torch-train-engine.ts";
import { TORCH_WORKER_DIR, TorchWorker, TorchWorkerError, torchPython } from "./torch-worker.ts";

const MODEL = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));
const skip = torchUnavailable();

function examples(seed: number, count: number): TrainBatch {
  const rows = generateToolcallTasks({ split: "train", seed, count }).map((task) =>
    renderChatExample(toolcallFamily.prompt(task), toolcallFamily.reference(task)[0]),
  );
  return { promptTokens: rows.map((r) => r.promptTokens), outputTokens: rows.map((r) => r.outputTokens) };
}

/** Prompts of `count` toolcall tasks, rendered with the chat template. */
function prompts(seed: number, count: number): number[][] {
  return generateToolcallTasks({ split: "eval", seed, count }).map((t) =>
    renderChat(toolcallFamily.prompt(t)),
  );
}

/** A checkpoint directory's tensors. */
async function tensorsOf(dir: string): Promise<Map<string, NamedTensor>> {
  return (await readHfCheckpoint(dir)).tensors;
}

/** The largest absolute difference between two sets of tensors. */
function largestGap(a: Map<string, NamedTensor>, b: Map<string, NamedTensor>): number {
  let gap = 0;
  for (const [name, t] of a) {
    const other = b.get(name)!.data;
    for (let i = 0; i < t.data.length; i++) gap = Math.max(gap, Math.abs(t.data[i] - other[i]));
  }
  return gap;
}

describe("torch engine checkpoints", { skip }, () => {
  let scratch: string;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), "arc-torch-engine-"));
  });
  after(() => rm(scratch, { recursive: true, force: true }));

  it("resumes a saved run exactly: weights, AdamW moments, schedule, step and reference", async () => {
    const settings = { device: "cpu", learningRate: 2e-3, warmupSteps: 2, decaySteps: 6 };
    const first = await TorchTrainEngine.fromCheckpoint(MODEL, settings);
    const dir = join(scratch, "resume");
    let resumed: TorchTrainEngine | undefined;
    try {
      for (let s = 0; s < 3; s++) await first.step(examples(s, 4), { kind: "sft" });
      await first.save(dir);
      resumed = await TorchTrainEngine.resume(dir, settings);
      assert.equal(await resumed.getStep(), 3);
      const next = { ...examples(9, 4) };
      const objective = { kind: "dpo" as const, beta: 0.2 }; // reads the reference model too
      const [a, b] = await Promise.all([first.step(next, objective), resumed.step(next, objective)]);
      assert.equal(b.step, 4);
      assert.equal(b.loss, a.loss);
      assert.equal(b.learningRate, a.learningRate);
      const [wa, wb] = await Promise.all([first.weights(), resumed.weights()]);
      assert.ok(wa.kind === "checkpoint" && wb.kind === "checkpoint");
      assert.equal(largestGap(await tensorsOf(wa.dir), await tensorsOf(wb.dir)), 0);
    } finally {
      await Promise.all([first.close(), resumed?.close()]);
    }
    // its training state is the torch engine's: the embedded engine says so instead of misreading it
    await assert.rejects(
      EmbeddedTrainEngine.resume(dir),
      (e: Error) => e instanceof CheckpointError && /torch engine/.test(e.message),
    );
  });

  it("passes an SFT batch's short and long rows apart, with the gradients all rows in one pass give", async () => {
    // rows of very different lengths: each toolcall prompt, and a short question with a one-word answer
    const long = examples(31, 3);
    const short = [renderChatExample([{ role: "user", content: "hi" }], "yes")];
    const batch = {
      promptTokens: [...long.promptTokens, ...short.map((r) => r.promptTokens)],
      outputTokens: [...long.outputTokens, ...short.map((r) => r.outputTokens)],
    };
    const settings = { device: "cpu", learningRate: 2e-3 };
    const [grouped, together] = await Promise.all([
      TorchTrainEngine.fromCheckpoint(MODEL, settings),
      TorchTrainEngine.fromCheckpoint(MODEL, { ...settings, microBatchRows: 64 }),
    ]);
    try {
      const paths = [join(scratch, "grouped.safetensors"), join(scratch, "together.safetensors")];
      const [a, b] = await Promise.all([
        grouped.batchGradients(batch, { kind: "sft" }, paths[0]),
        together.batchGradients(batch, { kind: "sft" }, paths[1]),
      ]);
      assert.ok(Math.abs(a.loss - b.loss) < 1e-6, `loss ${a.loss} vs ${b.loss}`);
      const [ga, gb] = await Promise.all(paths.map((path) => readSafetensors(path)));
      let diff = 0;
      let norm = 0;
      for (const [name, t] of ga)
        for (let i = 0; i < t.data.length; i++) {
          diff += (t.data[i] - gb.get(name)!.data[i]) ** 2;
          norm += t.data[i] ** 2;
        }
      assert.ok(
        norm > 0 && Math.sqrt(diff / norm) < 1e-5,
        `gradients apart by ${Math.sqrt(diff / norm)} (relative)`,
      );
    } finally {
      await Promise.all([grouped.close(), together.close()]);
    }
  });

  it("trains LoRA adapters only, and exports merged weights the embedded engine reads alike", async () => {
    const lora = {
      rank: 4,
      alpha: 8,
      targets: ["q_proj", "v_proj", "down_proj"] as ("q_proj" | "v_proj" | "down_proj")[],
    };
    const engine = await TorchTrainEngine.fromCheckpoint(MODEL, { device: "cpu", learningRate: 5e-3, lora });
    try {
      assert.equal(engine.info.trainableParameters, 4 * ((128 + 128) * 2 + (352 + 128)) * 4); // r (in + out) per adapter
      const batch = examples(21, 4);
      const losses: number[] = [];
      for (let s = 0; s < 4; s++) losses.push((await engine.step(batch, { kind: "sft" })).loss);
      assert.ok(losses[3] < losses[0], `loss ${losses.join(" → ")}`);
      const source = await engine.weights();
      assert.equal(source.kind, "checkpoint");
      const dir = source.kind === "checkpoint" ? source.dir : "";
      const embedded = await EmbeddedTrainEngine.fromCheckpoint(dir);
      const [a, b] = await Promise.all([embedded.logprobs(batch), engine.logprobs(batch)]);
      const gap = Math.max(...a.flatMap((row, r) => Array.from(row, (x, i) => Math.abs(x - b[r][i]))));
      assert.ok(gap < 1e-4, `merged export vs live adapters: ${gap}`);
      const saved = join(scratch, "lora");
      await engine.save(saved);
      assert.ok(existsSync(join(saved, "adapter", "adapter_config.json")), "the adapter in PEFT's layout");
      const resumed = await TorchTrainEngine.resume(saved, { device: "cpu", learningRate: 5e-3, lora });
      try {
        const again = await resumed.logprobs(batch);
        assert.deepEqual(again, b);
      } finally {
        await resumed.close();
      }
    } finally {
      await engine.close();
    }
  });
});

describe("torch engine generation", { skip }, () => {
  let sampler: TorchInferenceEngine;
  before(async () => {
    sampler = await TorchInferenceEngine.load(MODEL, { device: "cpu" });
  });
  after(() => sampler?.close());

  it("decodes greedily as the embedded engine does, with the log-probs training computes", async () => {
    const promptTokens = prompts(3, 3);
    const embedded = await EmbeddedInferenceEngine.load(MODEL);
    const requests = promptTokens.map((p) => ({ promptTokens: p, temperature: 0, maxTokens: 40 }));
    const [want, got] = await Promise.all([embedded.generate(requests), sampler.generate(requests)]);
    assert.deepEqual(
      got.map((r) => r.text),
      want.map((r) => r.text),
    );
    assert.deepEqual(
      got.map((r) => r.finishReason),
      want.map((r) => r.finishReason),
    );
    const trainer = await EmbeddedTrainEngine.fromCheckpoint(MODEL);
    const scored = await trainer.logprobs({
      promptTokens: got.map((r) => r.promptTokens),
      outputTokens: got.map((r) => r.outputTokens),
    });
    got.forEach((r, i) => {
      r.outputLogprobs.forEach((x, j) => {
        assert.ok(Math.abs(x - scored[i][j]) < 1e-4, `${x} vs ${scored[i][j]}`);
      });
    });
  });

  it("renders chat messages with a BPE model's own template, and answers as the embedded engine does", async () => {
    const bpe = fileURLToPath(new URL("../../../../models/toolcall-bpe", import.meta.url));
    const [torch, embedded] = await Promise.all([
      TorchInferenceEngine.load(bpe, { device: "cpu" }),
      EmbeddedInferenceEngine.load(bpe),
    ]);
    try {
      // the family's prompt with its tools, as the model was trained
      const requests = generateToolcallTasks({ split: "production", seed: 8, count: 4 }).map((t) => ({
        ...taskPrompt(toolcallFamily, t),
        temperature: 0,
        maxTokens: 64,
      }));
      const [got, want] = await Promise.all([torch.generate(requests), embedded.generate(requests)]);
      assert.deepEqual(
        got.map((r) => r.text),
        want.map((r) => r.text),
      );
      assert.ok(
        got.every((r) => r.finishReason === "stop" && r.text.startsWith('{"tool"')),
        got[0].text,
      );
    } finally {
      await torch.close();
    }
  });

  it("samples n per request, reproducibly by seed, stops at stop strings and reports versions", async () => {
    const [prompt] = prompts(4, 1);
    const request = {
      id: "q",
      promptTokens: prompt,
      n: 4,
      temperature: 4,
      topK: 50,
      topP: 0.99,
      seed: 7,
      maxTokens: 24,
    };
    const [a, b] = [await sampler.generate([request]), await sampler.generate([request])];
    assert.equal(a.length, 4);
    assert.deepEqual(
      a.map((r) => [r.requestId, r.sampleIndex]),
      [0, 1, 2, 3].map((i) => ["q", i]),
    );
    // the second call reuses the first's prompt from the prefix cache: the same samples, log-probs to float rounding
    const sampled = (results: GenResult[]) => results.map(({ outputLogprobs: _, ...r }) => r);
    assert.deepEqual(sampled(b), sampled(a));
    b.forEach((r, i) => {
      r.outputLogprobs.forEach((x, t) => {
        assert.ok(Math.abs(x - a[i].outputLogprobs[t]) < 1e-4);
      });
    });
    assert.ok(new Set(a.map((r) => r.text)).size > 1, "samples of one request differ");
    const [stopped] = await sampler.generate([{ promptTokens: prompt, temperature: 0, stop: ['"args"'] }]);
    assert.equal(stopped.finishReason, "stop");
    assert.ok(!stopped.text.includes('"args"') && stopped.text.length > 0, stopped.text);
    assert.ok(stopped.outputVersions.every((v) => v === 0));
  });

  it("keeps top-k and top-p to their tokens, and reports the top log-probs the embedded engine reports", async () => {
    const [prompt] = prompts(5, 1);
    const [greedy] = await sampler.generate([{ promptTokens: prompt, temperature: 0, maxTokens: 24 }]);
    // at a temperature that makes other tokens likely, top-k 1 and a tiny top-p leave only the most likely one
    const hot = { promptTokens: prompt, n: 3, temperature: 8, maxTokens: 24, seed: 11 };
    const [loose, topK1, topPTiny] = await Promise.all([
      sampler.generate([hot]),
      sampler.generate([{ ...hot, topK: 1 }]),
      sampler.generate([{ ...hot, topP: 0.01 }]),
    ]);
    assert.ok(
      loose.some((r) => r.text !== greedy.text),
      "untruncated samples at temperature 8 leave the greedy path",
    );
    for (const r of [...topK1, ...topPTiny]) assert.equal(r.text, greedy.text);
    // top-k 3 draws every token from the three most likely, as the alternatives reported beside it show
    const topK3 = await sampler.generate([{ ...hot, topK: 3, topLogprobs: 3 }]);
    let drawnOffGreedy = 0;
    for (const r of topK3) {
      r.outputTokens.forEach((token, t) => {
        const top = r.topLogprobs?.[t] ?? [];
        assert.equal(top.length, 3);
        assert.ok(
          top.some((alt) => alt.token === token),
          `token ${token} at ${t} is not among ${JSON.stringify(top)}`,
        );
        if (token !== top[0].token) drawnOffGreedy++;
      });
    }
    assert.ok(drawnOffGreedy > 0, "top-k 3 at temperature 8 draws more than the most likely token");
    const embedded = await EmbeddedInferenceEngine.load(MODEL);
    const request = { promptTokens: prompt, temperature: 0, maxTokens: 12, topLogprobs: 5 };
    const [[want], [got]] = await Promise.all([embedded.generate([request]), sampler.generate([request])]);
    assert.equal(got.topLogprobs?.length, got.outputTokens.length);
    got.topLogprobs?.forEach((alternatives, t) => {
      const expected = want.topLogprobs?.[t] ?? [];
      assert.deepEqual(
        alternatives.map((a) => a.token),
        expected.map((a) => a.token),
        `alternatives at ${t}`,
      );
      for (const [j, a] of alternatives.entries())
        assert.ok(Math.abs(a.logprob - expected[j].logprob) < 1e-4);
    });
  });

  it("applies a logit bias and the frequency and presence penalties as the embedded engine does", async () => {
    const embedded = await EmbeddedInferenceEngine.load(MODEL);
    const plain = prompts(7, 2).map((p) => ({
      promptTokens: p,
      temperature: 0,
      maxTokens: 40,
      topLogprobs: 3,
    }));
    const settings = [
      { logitBias: { 34: -4, 123: 1.5 } },
      { frequencyPenalty: 1.5 },
      { presencePenalty: 1.5, frequencyPenalty: -0.5 },
    ];
    const [unadjusted] = await sampler.generate(plain.slice(0, 1));
    for (const adjustment of settings) {
      const requests = plain.map((r) => ({ ...r, ...adjustment }));
      const [want, got] = await Promise.all([embedded.generate(requests), sampler.generate(requests)]);
      assert.deepEqual(
        got.map((r) => r.outputTokens),
        want.map((r) => r.outputTokens),
        JSON.stringify(adjustment),
      );
      got.forEach((r, i) => {
        r.outputLogprobs.forEach((x, j) => {
          assert.ok(Math.abs(x - want[i].outputLogprobs[j]) < 1e-4);
        });
      });
      assert.notDeepEqual(got[0].outputLogprobs, unadjusted.outputLogprobs, JSON.stringify(adjustment));
    }
    const forced = await sampler.generate([{ ...plain[0], maxTokens: 5, logitBias: { 90: 100 } }]);
    assert.equal(forced[0].text, "ZZZZZ");
    await assert.rejects(
      sampler.generate([{ ...plain[0], logitBias: { 264: 1 } }]),
      (e: Error) =>
        e instanceof TypeError && /logitBias: expected token ids from 0 to 263, got "264"/.test(e.message),
    );
  });

  it("streams each token as it is sampled, with the text the embedded engine streams", async () => {
    const embedded = await EmbeddedInferenceEngine.load(MODEL);
    const requests = prompts(8, 2).map((p) => ({
      promptTokens: p,
      temperature: 0,
      maxTokens: 48,
      stop: ['"args"'],
    }));
    const listen = async (engine: InferenceEngine) => {
      const events: TokenEvent[] = [];
      // turns of the event loop in which tokens were heard: more than one means they came while it generated
      const turns = new Set<number>();
      let turn = 0;
      let turning = true;
      const spin = () => {
        turn++;
        if (turning) setImmediate(spin);
      };
      spin();
      const results = await engine.generate(requests, {
        onToken: (e) => {
          events.push(e);
          turns.add(turn);
        },
      });
      turning = false;
      return { events, results, turns: turns.size };
    };
    const [want, got] = [await listen(embedded), await listen(sampler)];
    assert.ok(got.turns > 1, `tokens heard in ${got.turns} turn of the event loop`);
    for (const r of [0, 1]) {
      const mine = got.events.filter((e) => e.requestIndex === r);
      const result = got.results[r];
      assert.equal(mine.map((e) => e.textDelta).join(""), result.text);
      assert.deepEqual(
        mine.map((e) => e.token),
        result.outputTokens,
      );
      assert.deepEqual(
        mine.map((e) => e.finishReason),
        [...result.outputTokens.slice(1).map(() => undefined), result.finishReason],
      );
      const theirs = want.events.filter((e) => e.requestIndex === r);
      assert.deepEqual(
        mine.map((e) => [e.token, e.textDelta, e.finishReason]),
        theirs.map((e) => [e.token, e.textDelta, e.finishReason]),
      );
    }
    assert.ok(got.results.some((r) => r.finishReason === "stop" && r.text.length > 0));
  });

  it("runs calls made together as one worker call, each answered as if alone", async () => {
    const worker = TorchWorker.start();
    try {
      await worker.call("init", { role: "inference", modelDir: MODEL, device: "cpu" });
      const queue = new GenerationQueue(worker, byteChatTokenizer);
      const calls = prompts(9, 3).map((p, i) => [
        { id: "a", promptTokens: p, n: 2, temperature: 1, seed: 11 + i, maxTokens: 16 + 8 * i },
      ]);
      const wire = (requests: GenRequest[]) =>
        requests.map(({ grammar: _grammar, ...r }) => ({ ...r, id: r.id ?? "r0" }));
      const alone: GenResult[][] = [];
      for (const requests of calls) alone.push(await queue.submit(requests, wire(requests), {}));
      const before = worker.peekNextId();
      const together = await Promise.all(calls.map((requests) => queue.submit(requests, wire(requests), {})));
      assert.equal(worker.peekNextId() - before, 1, "one worker call for the three");
      together.forEach((results, k) => {
        assert.deepEqual(
          results.map((r) => [r.requestId, r.sampleIndex, r.outputTokens]),
          alone[k].map((r) => [r.requestId, r.sampleIndex, r.outputTokens]),
        );
      });
      // a request the worker refuses fails its own call only
      const bad = [{ promptTokens: [1, 99999], maxTokens: 4 }];
      const [good, refused] = await Promise.allSettled([
        queue.submit(calls[0], wire(calls[0]), {}),
        queue.submit(bad, wire(bad), {}),
      ]);
      assert.equal(good.status, "fulfilled");
      assert.ok(refused.status === "rejected" && /99999/.test(String(refused.reason)), String(refused));
    } finally {
      await worker.close();
    }
  });

  it("takes a trainer's weights as a new version, and aborts on a signal", async () => {
    const trainer = await TorchTrainEngine.fromCheckpoint(MODEL, { device: "cpu", learningRate: 0.05 });
    try {
      await trainer.step(examples(30, 4), { kind: "sft" }); // a step large enough to change greedy outputs
      const [prompt] = prompts(5, 1);
      const before = await sampler.generate([{ promptTokens: prompt, temperature: 0 }]);
      await sampler.setWeights(1, await trainer.weights());
      assert.equal(sampler.getVersion(), 1);
      const [after] = await sampler.generate([{ promptTokens: prompt, temperature: 0 }]);
      assert.ok(after.outputVersions.every((v) => v === 1));
      assert.notDeepEqual(after.outputTokens, before[0].outputTokens);
      // weights given as tensors (the base model's own) bring the base model's greedy answer back
      await sampler.setWeights(2, { kind: "tensors", tensors: await tensorsOf(MODEL) });
      const [restored] = await sampler.generate([{ promptTokens: prompt, temperature: 0 }]);
      assert.deepEqual(restored.outputTokens, before[0].outputTokens);
      assert.ok(restored.outputVersions.every((v) => v === 2));
    } finally {
      await trainer.close();
    }
    const controller = new AbortController();
    const pending = sampler.generate([{ promptTokens: prompts(6, 1)[0], maxTokens: 4000, ignoreEos: true }], {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 300);
    const [aborted] = await pending;
    assert.equal(aborted.finishReason, "abort");
    assert.ok(aborted.outputTokens.length < 1000);
  });
});

describe("torch engine errors", { skip }, () => {
  it("names the field or file at fault, and outlives a bad request", async () => {
    const engine = await TorchTrainEngine.fromCheckpoint(MODEL, { device: "cpu" });
    try {
      await assert.rejects(
        engine.step({ promptTokens: [[1, 2]], outputTokens: [[3, 9999]] }, { kind: "sft" }),
        (e: Error) =>
          e instanceof TorchWorkerError && e.type === "BatchError" && /row 0.*9999/.test(e.message),
      );
      await assert.rejects(
        engine.step({ promptTokens: [[1]], outputTokens: [[2]] }, { kind: "dpo" }),
        /odd number of rows/,
      );
      await assert.rejects(
        engine.load("/nonexistent/checkpoint"),
        /nonexistent\/checkpoint\/config.json: not found/,
      );
      assert.equal((await engine.step(examples(1, 2), { kind: "sft" })).step, 1);
    } finally {
      await engine.close();
    }
    await assert.rejects(
      TorchTrainEngine.fromCheckpoint("/nonexistent/model", { device: "cpu" }),
      /not found/,
    );
  });

  it("rejects the calls in flight when the worker dies, with what it printed", async () => {
    const worker = TorchWorker.start({ python: "sh", env: {} });
    await assert.rejects(worker.call("init", {}), /torch worker exited/);
  });
});

describe("data-parallel training under torchrun", { skip }, () => {
  it("gives the same parameters after 10 steps on two CPU processes (gloo) as on one", async () => {
    const settings = { device: "cpu", learningRate: 1e-3, warmupSteps: 3 };
    const [single, pair] = await Promise.all([
      TorchTrainEngine.fromCheckpoint(MODEL, settings),
      TorchTrainEngine.fromCheckpoint(MODEL, { ...settings, processes: 2 }),
    ]);
    try {
      assert.equal(pair.info.worldSize, 2);
      assert.equal(pair.info.trainModule, "DistributedDataParallel");
      for (let s = 0; s < 10; s++) {
        // odd: the ranks take 4 and 3 rows; the last step's one row leaves the second rank none
        const batch = examples(40 + s, s === 9 ? 1 : 7);
        const objective = s % 2 ? { kind: "sft" as const } : { kind: "dpo" as const, beta: 0.1 };
        const rows = objective.kind === "dpo" ? { ...examples(40 + s, 8) } : batch;
        const [a, b] = await Promise.all([single.step(rows, objective), pair.step(rows, objective)]);
        assert.ok(Math.abs(a.loss - b.loss) < 1e-5, `step ${s}: loss ${a.loss} vs ${b.loss}`);
      }
      const [wa, wb] = await Promise.all([single.weights(), pair.weights()]);
      assert.ok(wa.kind === "checkpoint" && wb.kind === "checkpoint");
      const gap = largestGap(await tensorsOf(wa.dir), await tensorsOf(wb.dir));
      console.log(`10 steps, 1 process vs 2: largest parameter gap ${gap.toExponential(2)}`);
      assert.ok(gap < 1e-5, `parameters differ by up to ${gap}`);
    } finally {
      await Promise.all([single.close(), pair.close()]);
    }
  });
});

describe("the worker from Python alone, as on a GPU machine without Node.js", { skip }, () => {
  /** Runs `python -m <module> <args>` in the worker's folder; resolves to what it printed. */
  const python = (args: string[]) =>
    promisify(execFile)(torchPython(), args, { cwd: TORCH_WORKER_DIR, maxBuffer: 16 * 2 ** 20 });

  it("passes its smoke check in bfloat16 on the CPU: every objective with LoRA, generation, save and load", async () => {
    const { stdout } = await python([
      "-m",
      "arc_tools.smoke",
      MODEL,
      "--device",
      "cpu",
      "--dtype",
      "bfloat16",
    ]);
    const report = JSON.parse(stdout);
    assert.equal(report.info.dtype, "bfloat16");
    for (const kind of ["sft", "dpo", "grpo"])
      assert.ok(Number.isFinite(report[kind].loss) && report[kind].gradNorm > 0, kind);
    assert.equal(report.ok, true, stdout);
  });

  it("measures training and generation in bfloat16 with its own bench", async () => {
    const dir = await mkdtemp(join(tmpdir(), "arc-torch-bench-"));
    try {
      const out = join(dir, "bench.json");
      const small = ["--shape=small", "--device=cpu", "--batch=2", "--length=64", "--steps=2"];
      await python(["-m", "arc_tools.bench", ...small, "--gen-batch=2", "--new-tokens=8", `--out=${out}`]);
      const figures = JSON.parse(await readFile(out, "utf8"));
      assert.equal(figures.device, "cpu");
      assert.equal(figures.dtype, "bfloat16");
      assert.ok(figures.train_tokens_per_s > 0 && figures.generate_tokens_per_s > 0, JSON.stringify(figures));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
