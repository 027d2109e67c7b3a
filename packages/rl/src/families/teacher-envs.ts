import { toolcallFamily } from "@arc/core/families";

/** The task families a teacher run labels and judges teachings of (the teaching data and rewards know only these). */
export const TEACHER_RUN_ENVS: readonly string[] = [toolcallFamily.env];
