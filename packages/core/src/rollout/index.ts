export type {
  Agent,
  Environment,
  Observation,
  RolloutWorkflow,
  Task,
  TaskContext,
  Trajectory,
} from "./types.ts";
