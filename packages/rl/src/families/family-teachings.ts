import { InvalidInputError } from "@arc/core";
import { toolcallFamily } from "@arc/core/families";
import type { FamilyTeaching } from "../teach/family-teaching.ts";
import { toolcallTeaching } from "./toolcall/toolcall-teaching.ts";

/** The teaching of each family a teacher run can teach, by env id (the keys are TEACHER_RUN_ENVS). */
export const FAMILY_TEACHINGS: ReadonlyMap<string, FamilyTeaching> = new Map([
  [toolcallFamily.env, toolcallTeaching],
]);

/** The teaching of a family a teacher run can teach; throws naming the families that have one otherwise. */
export function teachingOf(env: string): FamilyTeaching {
  const teaching = FAMILY_TEACHINGS.get(env);
  if (!teaching)
    throw new InvalidInputError(
      `data.env: teacher runs teach ${[...FAMILY_TEACHINGS.keys()].join(", ")} tasks only, got ${JSON.stringify(env)}`,
      { field: "data.env" },
    );
  return teaching;
}
