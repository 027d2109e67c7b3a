export type { Agent, Environment, Observation, RolloutWorkflow, Task, Trajectory } from "./types.ts";
