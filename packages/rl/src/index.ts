export * from "./env/index.ts";
export * from "./workflow/index.ts";
