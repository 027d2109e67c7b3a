export * from "./templates/index.ts";
