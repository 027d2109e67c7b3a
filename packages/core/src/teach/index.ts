export * from "./metrics/index.ts";
export * from "./ndr-monitor/index.ts";
export * from "./parse/index.ts";
export * from "./protocol/index.ts";
export * from "./reward/index.ts";
export * from "./templates/index.ts";
