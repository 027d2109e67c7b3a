import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { NotFoundError } from "@arc/core";
import type { RunState, StepRecord } from "./run-types.ts";

/**
 * The files of a run under `<runsDir>/<runId>/`:
 * `recipe.yaml` (resolved recipe), `state.json`, `metrics.jsonl`, `metrics.svg`,
 * `checkpoints/step-N/` (HF layout + `optimizer.safetensors`, `trainer_state.json`, `run_state.json`,
 * and `generator/` when the generator's weights differ from the policy's).
 */
export class RunDir {
  constructor(readonly dir: string) {}

  get recipePath(): string {
    return join(this.dir, "recipe.yaml");
  }
  get statePath(): string {
    return join(this.dir, "state.json");
  }
  get metricsPath(): string {
    return join(this.dir, "metrics.jsonl");
  }
  get chartPath(): string {
    return join(this.dir, "metrics.svg");
  }
  /** Relative path of step N's checkpoint. */
  checkpoint(step: number): string {
    return join("checkpoints", `step-${step}`);
  }

  async create(): Promise<void> {
    await mkdir(join(this.dir, "checkpoints"), { recursive: true });
  }

  /** Writes `state.json` atomically (a crash leaves the old or the new file, never half of one). */
  async writeState(state: RunState): Promise<void> {
    const tmp = `${this.statePath}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(state, null, 2)}\n`);
    await rename(tmp, this.statePath);
  }

  async readState(): Promise<RunState> {
    try {
      return JSON.parse(await readFile(this.statePath, "utf8")) as RunState;
    } catch {
      throw new NotFoundError(`run ${this.dir}: no state.json (is the run id right?)`);
    }
  }

  async readMetrics(): Promise<StepRecord[]> {
    let text: string;
    try {
      text = await readFile(this.metricsPath, "utf8");
    } catch {
      return [];
    }
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as StepRecord];
        } catch {
          return []; // a line cut short by kill -9
        }
      });
  }

  /** Rewrites `metrics.jsonl` with the records of steps up to `step` (resume drops steps after the checkpoint). */
  async truncateMetrics(step: number): Promise<StepRecord[]> {
    const kept = (await this.readMetrics()).filter((r) => r.step <= step);
    await writeFile(this.metricsPath, kept.map((r) => `${JSON.stringify(r)}\n`).join(""));
    return kept;
  }

  async appendMetrics(record: StepRecord): Promise<void> {
    await writeFile(this.metricsPath, `${JSON.stringify(record)}\n`, { flag: "a" });
  }
}
