// Rollouts over HTTP against rollouts in process: the same short recipes from models/toolcall-base, once sampling in
// the run's own engine and once on a separate `arc engine serve --allow-weight-updates` process (recipe key
// generator.url; the policy pushed as a checkpoint directory through /update_weights_from_disk). Semi-online DPO from
// one shared SFT checkpoint, and asynchronous decoupled GRPO with three sampling seeds; every final checkpoint judged
// greedily by the embedded engine on 512 held-out production tasks (seed 1000). About 12 minutes on 2 cores.
// Usage: npm run bench:remote
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { arcEngineServe } from "./arc-engine-serve.ts";
import { writeBenchResults } from "./results-file.ts";
import { DPO, failureRate, GRPO, GRPO_SEEDS, run, SFT, standardError } from "./torch-outcome.ts";

const MODEL = resolve("models/toolcall-base");

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
const round = (x: number) => Math.round(x * 1000) / 1000;

const runsDir = await mkdtemp(join(tmpdir(), "arc-remote-outcome-"));
const server = await arcEngineServe(["--model", MODEL, "--allow-weight-updates"]);
const began = performance.now();
try {
  const sft = await run("recipes/toolcall-sft.yaml", SFT, runsDir);
  console.log(`SFT checkpoint: held-out failure ${(await failureRate(sft)).toFixed(3)}`);
  const remote = [`generator.url=${server.url}`];
  const dpoIn = await run("recipes/toolcall-dpo.yaml", [`model.path=${sft}`, ...DPO], runsDir);
  const dpoRemote = await run("recipes/toolcall-dpo.yaml", [`model.path=${sft}`, ...DPO, ...remote], runsDir);
  const asyncGrpo = GRPO.filter(
    (o) => !o.startsWith("trainer.asyncRollouts") && !o.startsWith("trainer.decoupled"),
  );
  const grpoIn: string[] = [];
  const grpoRemote: string[] = [];
  for (const seed of GRPO_SEEDS) {
    grpoIn.push(await run("recipes/toolcall-grpo.yaml", [...asyncGrpo, `trainer.seed=${seed}`], runsDir));
    grpoRemote.push(
      await run("recipes/toolcall-grpo.yaml", [...asyncGrpo, `trainer.seed=${seed}`, ...remote], runsDir),
    );
  }
  const rates = async (dirs: string[]) => {
    const out: number[] = [];
    for (const dir of dirs) out.push(round(await failureRate(dir)));
    return out;
  };
  const dpo = { in_process: round(await failureRate(dpoIn)), remote: round(await failureRate(dpoRemote)) };
  const grpoInRates = await rates(grpoIn);
  const grpoRemoteRates = await rates(grpoRemote);
  const grpo = { in_process: round(mean(grpoInRates)), remote: round(mean(grpoRemoteRates)) };
  const se = { dpo: round(standardError(dpo.in_process)), grpo: round(standardError(grpo.in_process)) };
  const figures = {
    dpo_in_process_failure_rate: dpo.in_process,
    dpo_remote_failure_rate: dpo.remote,
    grpo_in_process_failure_rate: grpo.in_process,
    grpo_remote_failure_rate: grpo.remote,
    grpo_in_process_failure_rates_by_seed: grpoInRates,
    grpo_remote_failure_rates_by_seed: grpoRemoteRates,
    standard_error_dpo: se.dpo,
    standard_error_grpo: se.grpo,
    dpo_within_one_standard_error: Math.abs(dpo.remote - dpo.in_process) <= se.dpo,
    grpo_within_one_standard_error: Math.abs(grpo.remote - grpo.in_process) <= se.grpo,
    minutes: Math.round((performance.now() - began) / 6000) / 10,
  };
  console.log(JSON.stringify(figures));
  console.log(`wrote ${writeBenchResults("remote", figures)}`);
} finally {
  server.child.kill("SIGINT");
  await rm(runsDir, { recursive: true, force: true });
}
