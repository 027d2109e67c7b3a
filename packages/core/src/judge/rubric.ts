import type { Severity } from "../detect/verdict.ts";
import { InvalidInputError } from "../errors/arc-error.ts";
import { refuseUnknownKeys } from "../trace/known-keys.ts";

/** A kind of failure the judge may name: a short snake_case name, what it means, how much it matters. */
export interface RubricClass {
  name: string;
  description: string;
  severity: Exclude<Severity, "info">;
}

/** What a tenant's judge checks: the criteria a good answer meets and the failure classes it reports. */
export interface Rubric {
  /** Increases with every change; cached judgements are kept per version. */
  version: number;
  /** What a good answer does, one criterion per line the judge reads. */
  criteria: string[];
  classes: RubricClass[];
  /** Anything else the judge should know about the agent (its domain, its users). */
  instructions?: string;
}

const SEVERITIES = ["low", "medium", "high"] as const;
const CLASS_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** Reads a rubric as sent (JSON), with an error that names the field at fault. */
export function parseRubric(input: unknown, version = 1): Rubric {
  const fail = (field: string, message: string): never => {
    throw new InvalidInputError(`${field}: ${message}`, { field });
  };
  if (typeof input !== "object" || input === null || Array.isArray(input))
    fail("rubric", `expected an object with criteria and classes, got ${JSON.stringify(input)}`);
  const raw = input as Record<string, unknown>;
  for (const key of Object.keys(raw))
    if (!["criteria", "classes", "instructions", "version"].includes(key))
      fail(key, "unknown field (expected criteria, classes, instructions)");
  if (!Array.isArray(raw.criteria) || raw.criteria.length === 0)
    fail("criteria", "expected a non-empty list of strings");
  const criteria = (raw.criteria as unknown[]).map((c, i) =>
    typeof c === "string" && c.trim() !== ""
      ? c.trim()
      : fail(`criteria[${i}]`, "expected a non-empty string"),
  );
  if (!Array.isArray(raw.classes) || raw.classes.length === 0)
    fail("classes", "expected a non-empty list of {name, description, severity}");
  const seen = new Set<string>();
  const classes = (raw.classes as unknown[]).map((c, i): RubricClass => {
    const at = `classes[${i}]`;
    const item = (typeof c === "object" && c !== null ? c : fail(at, "expected an object")) as Record<
      string,
      unknown
    >;
    refuseUnknownKeys(item, ["name", "description", "severity"], "a rubric class", at);
    const name = item.name;
    if (typeof name !== "string" || !CLASS_NAME.test(name))
      fail(`${at}.name`, `expected a snake_case name (a-z, 0-9, _), got ${JSON.stringify(name)}`);
    if (seen.has(name as string)) fail(`${at}.name`, `"${name}" is named twice`);
    seen.add(name as string);
    if (name === "none") fail(`${at}.name`, `"none" is the judge's answer for a passing trace`);
    if (typeof item.description !== "string" || item.description.trim() === "")
      fail(`${at}.description`, "expected a non-empty string");
    if (!SEVERITIES.includes(item.severity as (typeof SEVERITIES)[number]))
      fail(
        `${at}.severity`,
        `expected one of ${SEVERITIES.join(", ")}, got ${JSON.stringify(item.severity)}`,
      );
    return {
      name: name as string,
      description: (item.description as string).trim(),
      severity: item.severity as RubricClass["severity"],
    };
  });
  if (raw.instructions !== undefined && typeof raw.instructions !== "string")
    fail("instructions", "expected a string");
  return {
    version,
    criteria,
    classes,
    ...(typeof raw.instructions === "string" && raw.instructions.trim() !== ""
      ? { instructions: raw.instructions.trim() }
      : {}),
  };
}
