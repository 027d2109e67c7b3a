import type { ZodError } from "zod";
import { InvalidInputError } from "../errors/index.ts";

/** Turns a zod error into one InvalidInputError whose message names each offending field. */
export function toInvalidInputError(error: ZodError, root = ""): InvalidInputError {
  const issues = error.issues.slice(0, 5).map((issue) => {
    const path = [root, ...issue.path].filter((p) => p !== "").join(".");
    return `${path || "(body)"}: ${issue.message}`;
  });
  const more = error.issues.length > 5 ? ` (and ${error.issues.length - 5} more)` : "";
  const first = error.issues[0];
  const field = first ? [root, ...first.path].filter((p) => p !== "").join(".") : undefined;
  return new InvalidInputError(`invalid input: ${issues.join("; ")}${more}`, { field, cause: error });
}
