export { ChatAgent } from "./chat-agent.ts";
export { MultiTurnWorkflow, type MultiTurnWorkflowOptions } from "./multi-turn-workflow.ts";
export { RlvrWorkflow, type RlvrWorkflowOptions } from "./rlvr-workflow.ts";
export { type SamplingOptions, versionRange } from "./sampling.ts";
