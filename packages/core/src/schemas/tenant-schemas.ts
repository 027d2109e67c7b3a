import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { linearRegExpEngine } from "./linear-regexp.ts";
import { DeadlineExceededError, runWithin, type TimeBudget } from "./run-within.ts";
import { SCHEMA_BOUNDS } from "./schema-bounds.ts";
import { schemaBoundsProblem } from "./schema-bounds-problem.ts";

/** What checking a value against a tenant's schema found: valid, the first error, or why it could not be checked. */
export type SchemaCheck =
  | { status: "valid" }
  | { status: "invalid"; error: ErrorObject | undefined }
  | { status: "unchecked"; reason: string };

/** Distinct schemas kept compiled (the least recently compiled is dropped first); a tenant's tools repeat. */
const MAX_COMPILED = 64;

/** An Ajv that compiles one tenant schema, its patterns in RE2. */
const newAjv = () =>
  new Ajv({
    allErrors: false,
    strict: false,
    validateSchema: false,
    logger: false,
    code: { regExp: linearRegExpEngine },
  });

let warm = false;
/**
 * Compiles and runs a small schema with a pattern once per process: the first compile pays Ajv's and RE2's start-up
 * (tens of milliseconds), which is no tenant's schema's cost and is paid outside every deadline.
 */
function warmUp(): void {
  if (warm) return;
  warm = true;
  newAjv().compile({ type: "object", properties: { a: { type: "string", pattern: "^a+$" } } })({ a: "aa" });
}

/**
 * One tenant's JSON Schemas compiled with Ajv, each in an Ajv instance of its own: a `$id` one schema declares is
 * seen by no other schema, the tenant's or another's, and a `$ref` resolves inside its own schema only. Every schema
 * is held to SCHEMA_BOUNDS: its size and depth before compiling, its patterns in RE2 (linear time), its compiling
 * within compileMs and each check within checkMs, all within the caller's budget. A check that ran out of time
 * stops where it is and says so; the validator it stopped is not run again.
 */
export class TenantSchemas {
  /** Validators by schema text, or why the schema cannot be checked. */
  private readonly compiled = new Map<string, ValidateFunction | string>();

  constructor() {
    warmUp();
  }

  /** Checks `value` against `schema` within SCHEMA_BOUNDS and what is left of `budget`. */
  check(schema: unknown, value: unknown, budget: TimeBudget): SchemaCheck {
    const key = JSON.stringify(schema) ?? "undefined";
    const validate = this.compiled.get(key) ?? this.compile(schema, key, budget);
    if (typeof validate === "string") return { status: "unchecked", reason: validate };
    const ms = Math.min(SCHEMA_BOUNDS.checkMs, budget.left());
    if (ms < 1) return { status: "unchecked", reason: spent(budget) };
    try {
      return runWithin(ms, () => validate(value))
        ? { status: "valid" }
        : { status: "invalid", error: validate.errors?.[0] };
    } catch (error) {
      if (!(error instanceof DeadlineExceededError)) {
        return { status: "unchecked", reason: `checking failed: ${(error as Error).message}` };
      }
      if (ms < SCHEMA_BOUNDS.checkMs) {
        this.compiled.delete(key);
        return { status: "unchecked", reason: spent(budget) };
      }
      const reason = `checking a value took more than ${SCHEMA_BOUNDS.checkMs} ms, the bound on one check`;
      this.keep(key, reason);
      return { status: "unchecked", reason };
    }
  }

  /** Compiles `schema` in an Ajv of its own, within the bounds; keeps the outcome unless the budget cut it short. */
  private compile(schema: unknown, key: string, budget: TimeBudget): ValidateFunction | string {
    const problem = schemaBoundsProblem(schema);
    if (problem) return this.keep(key, `${problem.path.join(".") || "the schema"} ${problem.message}`);
    const ms = Math.min(SCHEMA_BOUNDS.compileMs, budget.left());
    if (ms < 1) return spent(budget);
    const ajv = newAjv();
    try {
      return this.keep(
        key,
        runWithin(ms, () => ajv.compile(schema as object)),
      );
    } catch (error) {
      if (!(error instanceof DeadlineExceededError)) return this.keep(key, (error as Error).message);
      if (ms < SCHEMA_BOUNDS.compileMs) return spent(budget);
      return this.keep(key, `compiling took more than ${SCHEMA_BOUNDS.compileMs} ms, the bound on a schema`);
    }
  }

  private keep<T extends ValidateFunction | string>(key: string, outcome: T): T {
    this.compiled.delete(key);
    if (this.compiled.size >= MAX_COMPILED) this.compiled.delete(this.compiled.keys().next().value as string);
    this.compiled.set(key, outcome);
    return outcome;
  }
}

/** Why a check was not run: the budget it shared with others was spent. */
function spent(budget: TimeBudget): string {
  return `the schema checks of this trace took more than ${budget.ms} ms together, their bound`;
}
