import { existsSync } from "node:fs";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import type { Recipe, SftWarmUp } from "../../recipe/recipe-schema.ts";
import { SFT_WARM_UP_RUN } from "../../recipe/sft-warm-up-recipe.ts";
import type { RunDir } from "../run-dir.ts";
import type { RunStatus } from "../run-types.ts";
import { type StartPartRun, trainPartInProcess } from "./in-process-part.ts";
import { plannedWarmUp } from "./planned-warm-up.ts";
import type { WarmUpReport } from "./warm-up-types.ts";

/** The file, in a run's folder, of its planned warm-up's report and the checkpoint it handed on. */
export const PLANNED_WARM_UP_FILE = `${SFT_WARM_UP_RUN}.json`;

/** What a finished planned warm-up leaves for the run (and for a resumed run, which trains from it). */
export interface PlannedWarmUpRecord {
  /** The checkpoint handed on, relative to the run's folder. */
  checkpoint: string;
  report: WarmUpReport;
}

/**
 * A run's planned SFT warm-up (`sftWarmUp.budgetS` or `stopAt`): its parts are runs `<run>/sft-warm-up`,
 * `<run>/sft-warm-up-part<n>` (re-plans) and, while it is timed, `<run>/sft-warm-up-probe`; when it ends, the
 * checkpoint it hands on and its report go to `<run>/sft-warm-up.json`, which a resumed run trains from. A warm-up
 * stopped before it ended starts again when the run resumes: a plan is made for the time it then has.
 */
export async function plannedSftWarmUp(
  warm: Recipe,
  block: SftWarmUp,
  dir: RunDir,
  start: StartPartRun,
  signal?: AbortSignal,
): Promise<{ modelDir: string | null; status: RunStatus }> {
  const recordPath = join(dir.dir, PLANNED_WARM_UP_FILE);
  if (existsSync(recordPath)) {
    const record = JSON.parse(await readFile(recordPath, "utf8")) as PlannedWarmUpRecord;
    return { modelDir: join(dir.dir, record.checkpoint), status: "completed" };
  }
  for (const name of await readdir(dir.dir))
    if (name === SFT_WARM_UP_RUN || name.startsWith(`${SFT_WARM_UP_RUN}-`))
      await rm(join(dir.dir, name), { recursive: true, force: true });
  const { checkpoint, report } = await plannedWarmUp(block, {
    from: warm.model.path,
    runId: SFT_WARM_UP_RUN,
    deadline: block.budgetS === undefined ? Number.POSITIVE_INFINITY : Date.now() + block.budgetS * 1000,
    evalCount: warm.data.evalCount,
    runPart: (part) => trainPartInProcess(warm, part, start, signal),
    say: (line) => console.error(`${warm.name}: ${line}`),
  });
  if (signal?.aborted || checkpoint === null) return { modelDir: null, status: "cancelled" };
  const record: PlannedWarmUpRecord = { checkpoint: relative(dir.dir, checkpoint), report };
  await writeFile(recordPath, `${JSON.stringify(record, null, 2)}\n`);
  return { modelDir: checkpoint, status: "completed" };
}
