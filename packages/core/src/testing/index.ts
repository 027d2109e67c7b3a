export { type WaitUntilOptions, waitUntil } from "./wait-until.ts";
