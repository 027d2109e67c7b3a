// npm run bench:demo: the main job as a new user meets it. Each run clones this repository's HEAD into a temporary
// folder and runs the README's `npm install && npm start` there; with --tests-alongside K, run K has `npm test` of
// another fresh clone running beside it. Writes bench/results/demo.json: each run's live failure rate before and
// after, whether the target was met, and how its SFT warm-up went.
// Usage: npm run bench:demo [-- --runs 5] [-- --tests-alongside 1]
//        npm run bench:demo -- --collect <clone>,<clone>,... [--tests-alongside <clone>]   (runs already made)
//        npm run bench:demo -- --base-model <an imported model> [--runs 1] [--minutes 45]   (bench/demo-real.ts)
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { benchImportedBase } from "./demo-real.ts";
import type { DemoRun } from "./demo-run.ts";
import { median } from "./median.ts";
import { writeBenchResults } from "./results-file.ts";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? undefined : args[i + 1];
};
const ROOT = resolve(import.meta.dirname, "..");

/** Runs `command` in `cwd` through the shell; resolves with its exit code. */
function sh(command: string, cwd: string, log: string): Promise<number> {
  return new Promise((done) => {
    const child = spawn("bash", ["-c", `${command} > ${log} 2>&1`], { cwd, stdio: "ignore" });
    child.on("exit", (code) => done(code ?? 1));
  });
}

function freshClone(name: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), `arc-demo-${name}-`)), "arc");
  execFileSync("git", ["clone", "-q", ROOT, dir]);
  return dir;
}

/** A finished run's figures; `testsExitCode` is null where no `npm test` ran beside it or its code is unknown. */
function readRun(clone: string, testsAlongside: boolean, testsExitCode: number | null): DemoRun {
  const home = join(clone, ".arc", "demo");
  const path = join(home, "summary.json");
  if (!existsSync(path)) throw new Error(`${clone}: no .arc/demo/summary.json (did npm start finish?)`);
  const s = JSON.parse(readFileSync(path, "utf8"));
  const production = (s.versions as { name: string; status: string }[]).find((v) => v.status === "promoted");
  const newModelServed = production !== undefined && production.name !== "toolcall-base";
  return {
    commit: execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: clone, encoding: "utf8" }).trim(),
    base_failure_rate: s.base_failure_rate,
    final_failure_rate: s.final_failure_rate,
    // the demo's target: a new model in production at half the live failure rate or less, no pattern worse
    target_met:
      newModelServed &&
      s.base_failure_rate !== null &&
      s.final_failure_rate !== null &&
      s.final_failure_rate <= s.base_failure_rate / 2 &&
      s.patterns_worse === 0,
    patterns_worse: s.patterns_worse,
    new_model_served: newModelServed,
    warmup_steps: s.warmup_steps ?? null,
    warmup_planned_steps: s.warmup_planned_steps ?? null,
    warmup_seconds_per_step: s.warmup_seconds_per_step ?? null,
    warmup_replans: s.warmup_replans ?? null,
    wall_s: s.wall_s,
    npm_test_alongside: testsAlongside,
    npm_test_exit_code: testsExitCode,
  };
}

async function makeRuns(count: number, testsAlongside: number | undefined): Promise<DemoRun[]> {
  const runs: DemoRun[] = [];
  for (let i = 1; i <= count; i++) {
    const clone = freshClone(`run${i}`);
    if ((await sh("npm install", clone, "install.log")) !== 0)
      throw new Error(`${clone}: npm install failed`);
    const alongside = testsAlongside === i;
    let tests: Promise<number> | undefined;
    if (alongside) {
      const other = freshClone(`tests${i}`);
      tests = sh("npm install && npm test", other, "test.log");
      console.log(`run ${i}: npm test of ${other} runs beside it`);
    }
    console.log(`run ${i} of ${count}: npm start in ${clone}`);
    const code = await sh("npm start", clone, "start.log");
    if (code !== 0) throw new Error(`${clone}: npm start exited ${code} (see start.log)`);
    const testsExitCode = tests ? await tests : null;
    if (tests) console.log(`run ${i}: npm test beside it exited ${testsExitCode}`);
    runs.push(readRun(clone, alongside, testsExitCode));
    console.log(JSON.stringify(runs.at(-1)));
  }
  return runs;
}

/** The toy base's runs: fresh clones' `npm start`, or runs already made; writes demo.json. */
async function benchToyBase(): Promise<void> {
  const collect = flag("collect");
  const alongsideFlag = flag("tests-alongside");
  const runs = collect
    ? collect
        .split(",")
        .map((dir) =>
          readRun(resolve(dir), alongsideFlag !== undefined && resolve(alongsideFlag) === resolve(dir), null),
        )
    : await makeRuns(
        Number(flag("runs") ?? 5),
        alongsideFlag === undefined ? undefined : Number(alongsideFlag),
      );

  const rates = (key: "base_failure_rate" | "final_failure_rate") =>
    median(runs.map((r) => r[key]).filter((x): x is number => x !== null));
  const met = runs.filter((r) => r.target_met).length;
  const figures = {
    runs_count: runs.length,
    target_met_runs: met,
    median_base_failure_rate: rates("base_failure_rate"),
    median_final_failure_rate: rates("final_failure_rate"),
    runs,
  };
  console.log(`target met in ${met} of ${runs.length} runs`);
  console.log("wrote", writeBenchResults("demo", figures));
}

const importedBase = flag("base-model");
if (importedBase === undefined) await benchToyBase();
else
  console.log(
    "wrote",
    await benchImportedBase(resolve(importedBase), Number(flag("runs") ?? 1), Number(flag("minutes") ?? 45)),
  );
