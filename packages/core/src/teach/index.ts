export * from "./parse/index.ts";
export * from "./templates/index.ts";
