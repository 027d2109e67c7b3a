export * from "./engine-api/index.ts";
export * from "./errors/index.ts";
export * from "./rollout/index.ts";
export * from "./tasks/index.ts";
export * from "./teach/index.ts";
export * from "./trace/index.ts";
export * from "./verify/index.ts";
export * from "./detect/index.ts";
