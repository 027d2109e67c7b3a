// How much the two halves of asynchronous RL slow each other when they share this machine, at the size of a step of
// recipes/toolcall-grpo.yaml: the committed toolcall base generating groups of 4 samples for 8 production prompts
// (temperature 1, up to 96 tokens), and a trainer of the same size taking steps on 32 rows of 40 prompt and 80 answer
// tokens, each on a worker thread of its own, first alone and then both at once.
// The slowdowns bound what overlapping them can give: with generation slowed by g and training by t while they
// share, the best an asynchronous run can do against a synchronous one (whatever its split) is (g + t) / (g * t),
// 2x when they do not slow each other.
// Usage: npm run bench:contention [-- --seconds 30]
// Writes bench/results/thread-contention.json.
import { parseArgs } from "node:util";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { toolcallFamily } from "@arc/core/families";
import { configForSize, EmbeddedInferenceEngine, EmbeddedTrainEngine, initWeights } from "@arc/engine";
import { writeBenchResults } from "./results-file.ts";

/** What one worker does for `seconds` once its engine is ready: generate batches or take training steps. */
interface Job {
  kind: "generate" | "train";
  seconds: number;
}

/** A worker's report: work units done per second (generated tokens, or training steps). */
interface Rate {
  kind: Job["kind"];
  perSecond: number;
}

async function runJob(job: Job, start: SharedArrayBuffer): Promise<Rate> {
  let unit: () => Promise<number>;
  if (job.kind === "generate") {
    const family = toolcallFamily;
    const engine = await EmbeddedInferenceEngine.load("models/toolcall-base", { maxBatchSize: 32 });
    const requests = family
      .generate({ split: "production", seed: 999, count: 8 })
      .map((task, i) => ({ messages: family.prompt(task), maxTokens: 96, temperature: 1, n: 4, seed: i }));
    unit = async () => (await engine.generate(requests)).reduce((n, o) => n + o.outputTokens.length, 0);
  } else {
    const config = configForSize("small");
    const trainer = await EmbeddedTrainEngine.create(config, initWeights(config, 1), { learningRate: 1e-4 });
    const row = (seed: number, length: number) => Array.from({ length }, (_, i) => (seed * 31 + i * 7) % 256);
    const batch = {
      promptTokens: Array.from({ length: 32 }, (_, i) => row(i, 40)),
      outputTokens: Array.from({ length: 32 }, (_, i) => row(i + 32, 80)),
      lossMask: Array.from({ length: 32 }, () => new Array(80).fill(1)),
    };
    unit = async () => {
      await trainer.step(batch, { kind: "sft" });
      return 1;
    };
  }
  await unit(); // warm-up: compilation and first allocations
  // every worker of a phase starts together, so the phases measure sharing for their whole length
  const flag = new Int32Array(start);
  Atomics.add(flag, 1, 1);
  Atomics.wait(flag, 0, 0);
  let done = 0;
  const began = performance.now();
  while (performance.now() - began < job.seconds * 1000) done += await unit();
  return { kind: job.kind, perSecond: done / ((performance.now() - began) / 1000) };
}

/** Runs one worker per job at once and returns their rates. */
async function phase(jobs: Job[]): Promise<Rate[]> {
  const start = new SharedArrayBuffer(8);
  const flag = new Int32Array(start);
  const entry = `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); });`;
  const rates = jobs.map(
    (job) =>
      new Promise<Rate>((resolve, reject) => {
        const worker = new Worker(entry, { eval: true, workerData: { job, start } });
        worker.once("message", (rate: Rate) => {
          resolve(rate);
          void worker.terminate();
        });
        worker.once("error", reject);
      }),
  );
  while (Atomics.load(flag, 1) < jobs.length) await new Promise((r) => setTimeout(r, 20));
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
  return Promise.all(rates);
}

if (!isMainThread) {
  const { job, start } = workerData as { job: Job; start: SharedArrayBuffer };
  parentPort?.postMessage(await runJob(job, start));
} else {
  const { values } = parseArgs({ options: { seconds: { type: "string", default: "30" } } });
  const seconds = Number(values.seconds);
  if (!(seconds > 0)) throw new Error(`--seconds: expected a positive number, got ${values.seconds}`);
  const log = (line: string) => console.log(`[bench:contention] ${line}`);
  const [generateAlone] = await phase([{ kind: "generate", seconds }]);
  log(`generation alone: ${generateAlone.perSecond.toFixed(0)} tokens/s`);
  const [trainAlone] = await phase([{ kind: "train", seconds }]);
  log(`training alone: ${trainAlone.perSecond.toFixed(2)} steps/s`);
  const shared = await phase([
    { kind: "generate", seconds },
    { kind: "train", seconds },
  ]);
  const generateShared = shared.find((r) => r.kind === "generate") as Rate;
  const trainShared = shared.find((r) => r.kind === "train") as Rate;
  const g = generateAlone.perSecond / generateShared.perSecond;
  const t = trainAlone.perSecond / trainShared.perSecond;
  const figures = {
    generate_tokens_per_s_alone: Math.round(generateAlone.perSecond),
    generate_tokens_per_s_shared: Math.round(generateShared.perSecond),
    train_steps_per_s_alone: Number(trainAlone.perSecond.toFixed(3)),
    train_steps_per_s_shared: Number(trainShared.perSecond.toFixed(3)),
    generate_slowdown: Number(g.toFixed(3)),
    train_slowdown: Number(t.toFixed(3)),
    /** The most an asynchronous run can gain over a synchronous one here, at the best split of the two. */
    async_speedup_ceiling: Number(((g + t) / (g * t)).toFixed(3)),
    seconds_per_phase: seconds,
  };
  log(
    `both at once: generation ${generateShared.perSecond.toFixed(0)} tokens/s (${g.toFixed(2)}x slower), training ${trainShared.perSecond.toFixed(2)} steps/s (${t.toFixed(2)}x slower); async can gain at most ${figures.async_speedup_ceiling}x over sync here`,
  );
  log(`wrote ${writeBenchResults("thread-contention", figures)}`);
}
