/**
 * Makes the shipped adaptive teachers of the frozen models/toolcall-base: runs recipes/teacher-sft.yaml, then
 * recipes/teacher-grpo.yaml (which starts from the first's model folder), through `arc train`'s loop, and writes each
 * run's last checkpoint to its model folder with teacher.json: the command, the commit, the recipe, and the run's
 * figures (what labelling the SFT data measured; the last step's and the last held-out evaluation's).
 *
 *   node --import tsx scripts/make-teacher.ts [sft] [grpo] [key=value ...]
 *
 * Without a stage it makes both, in order. `key=value` overrides apply to each stage's recipe.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadRecipe, type StepRecord, startRun, TEACHING_DATA_FILE } from "@arc/rl";
import { engineFactory } from "@arc/rl/embedded";
import { currentCommit, writeModelFolder } from "./shipped-model.ts";

const STAGES = {
  sft: { recipe: "recipes/teacher-sft.yaml", out: "models/teacher-toolcall-sft" },
  grpo: { recipe: "recipes/teacher-grpo.yaml", out: "models/teacher-toolcall" },
} as const;
type Stage = keyof typeof STAGES;

const args = process.argv.slice(2);
const overrides = args.filter((a) => a.includes("="));
const named = args.filter((a) => !a.includes("="));
for (const name of named)
  if (!(name in STAGES)) throw new Error(`stage: expected sft or grpo, got ${JSON.stringify(name)}`);
const stages = (named.length > 0 ? named : Object.keys(STAGES)) as Stage[];

/** The figures of a run's records: its last step's, and its last held-out evaluation's. */
function runFigures(records: readonly StepRecord[]): Record<string, unknown> {
  const last = records.at(-1);
  const judged = [...records].reverse().find((r) => r.evalAccuracy !== undefined);
  return {
    lastLoss: last?.loss,
    ...(last?.reward === null
      ? {}
      : { lastMeanReward: last?.reward, lastTeachingNdr: last?.extra.teachingNdr }),
    ...(judged
      ? {
          heldOutStep: judged.step,
          heldOutTaughtAccuracy: judged.evalAccuracy,
          heldOutStudentAloneAccuracy: judged.extra.evalStudentAloneAccuracy,
          heldOutNdr: judged.extra.evalNdr,
        }
      : {}),
  };
}

async function make(stage: Stage): Promise<void> {
  const { recipe: path, out } = STAGES[stage];
  const log = (line: string) => console.error(`[make-teacher ${stage}] ${line}`);
  const recipe = await loadRecipe(path, overrides);
  const commit = currentCommit();
  const work = await mkdtemp(join(tmpdir(), "arc-teacher-"));
  try {
    const result = await startRun(recipe, {
      runsDir: work,
      factory: engineFactory,
      hooks: {
        onStep(r) {
          const held =
            r.evalAccuracy === undefined
              ? ""
              : `, the student taught ${r.evalAccuracy.toFixed(3)} (alone ${r.extra.evalStudentAloneAccuracy?.toFixed(3)}, NDR ${r.extra.evalNdr?.toFixed(3)})`;
          if (r.step % 50 === 0 || r.evalAccuracy !== undefined || recipe.trainer.algorithm === "grpo")
            log(
              `step ${r.step}/${recipe.trainer.steps}: loss ${r.loss?.toFixed(4)}${r.reward === null ? "" : ` reward ${r.reward.toFixed(3)}`}${held}`,
            );
        },
      },
    });
    if (result.status !== "completed" || !result.lastCheckpoint)
      throw new Error(`${path}: training ended ${result.status}`);
    await writeModelFolder(join(result.dir, result.lastCheckpoint), out);
    const labelled = join(result.dir, TEACHING_DATA_FILE);
    const record = {
      recipe: path,
      resolved: recipe,
      command: ["node --import tsx scripts/make-teacher.ts", stage, ...overrides].join(" "),
      commit,
      figures: {
        ...(existsSync(labelled) ? JSON.parse(await readFile(labelled, "utf8")) : {}),
        ...runFigures(result.records),
      },
      trainSeconds: Math.round(result.records.at(-1)?.elapsedS ?? 0),
    };
    await writeFile(join(out, "teacher.json"), `${JSON.stringify(record, null, 2)}\n`);
    log(`wrote ${resolve(out)}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

for (const stage of stages) await make(stage);
