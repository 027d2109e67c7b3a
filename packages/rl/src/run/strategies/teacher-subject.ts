import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Recipe } from "../../recipe/index.ts";
import { openTeacherRun } from "../../teach/teacher-run.ts";
import type { EngineChoice, EngineFactory } from "../engine-factory.ts";
import type { RunSubject } from "./run-subject.ts";

/** A teacher run's file of what labelling its SFT data measured (`TeacherRun.summary`). */
export const TEACHING_DATA_FILE = "teaching.json";

/**
 * A run of a recipe's `teaching` block: the model learns to teach a frozen student, from labelled teachings (SFT) or
 * from what its teachings do to the student (GRPO), and is judged by the student it teaches. What labelling the data
 * measured goes to `<run>/teaching.json`.
 */
export async function teacherSubject(
  recipe: Recipe,
  factory: EngineFactory,
  engine: EngineChoice,
  runDir: string,
): Promise<RunSubject> {
  const teacher = await openTeacherRun(recipe, factory, engine);
  if (Object.keys(teacher.summary).length > 0)
    await writeFile(join(runDir, TEACHING_DATA_FILE), `${JSON.stringify(teacher.summary, null, 2)}\n`);
  return {
    data: teacher.data,
    sample: teacher.sampler,
    evaluate: (teacherEngine, signal) => teacher.evaluate(teacherEngine, signal),
    stepExtra: () => ({}),
    finalShortfall: () => undefined,
    close: () => teacher.close(),
  };
}
