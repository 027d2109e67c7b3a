import { readFileSync } from "node:fs";
import { GeneralItem, InvalidInputError } from "@arc/core";

/** The shipped general slice, made by `scripts/make-general-slice.ts`. */
const SHIPPED_GENERAL_SLICE = new URL("../../data/general-slice.jsonl", import.meta.url);

let shipped: GeneralItem[] | undefined;

/** Parses a general slice from JSONL, one item a line; a bad line is refused with its line number and the problem. */
export function parseGeneralSlice(text: string, source: string): GeneralItem[] {
  return text
    .split("\n")
    .map((line, i) => ({ line: line.trim(), number: i + 1 }))
    .filter(({ line }) => line !== "")
    .map(({ line, number }) => {
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (error) {
        throw new InvalidInputError(
          `${source}:${number}: expected a JSON object, got ${(error as Error).message}`,
        );
      }
      const parsed = GeneralItem.safeParse(json);
      if (!parsed.success)
        throw new InvalidInputError(
          `${source}:${number}: ${parsed.error.issues.map((x) => `${x.path.join(".")}: ${x.message}`).join("; ")}`,
        );
      return parsed.data;
    });
}

/** The general slice shipped with Arc (read once): prompts unrelated to any agent's task, each with its check. */
export function shippedGeneralSlice(): GeneralItem[] {
  shipped ??= parseGeneralSlice(readFileSync(SHIPPED_GENERAL_SLICE, "utf8"), SHIPPED_GENERAL_SLICE.pathname);
  return shipped;
}
