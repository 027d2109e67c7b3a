// Types of scripts/required-parts.mjs, for the tests that import it.

/** A part of a machine that some tests need. */
export type Part = "python" | "ray" | "postgres" | "chromium" | "cc" | "npm";

/** Each part a test may need, and what it is. */
export declare const PARTS: Record<Part, string>;
/** The modules the project's Python must import for every Python-backed test. */
export declare const PYTHON_MODULES: string[];
/** The parts ARC_REQUIRE names; throws on a name that is not a part. */
export declare function requiredParts(env?: NodeJS.ProcessEnv): Set<Part>;
/** Thrown where a part ARC_REQUIRE names is missing. */
export declare class MissingPartError extends Error {
  /** The part that is missing. */
  readonly part: Part;
  constructor(part: Part, why: string);
  /** Whether `error` is a MissingPartError, from this module's copy or another's. */
  static isInstance(error: unknown): error is MissingPartError;
}
/** For node:test's `skip`: false, or `<part>: <missing>`; throws MissingPartError when ARC_REQUIRE names the part. */
export declare function skipWithout(
  part: Part,
  missing: string | false | undefined,
  env?: NodeJS.ProcessEnv,
): string | false;
/** The project's Python: ARC_PYTHON, else the venv that scripts/python-env.mjs makes. */
export declare function projectPython(env?: NodeJS.ProcessEnv): string;
/** Why `python` lacks one of `modules` (found, not imported), or undefined when it has them all. */
export declare function pythonLacks(python: string, modules: string[]): string | undefined;
/** Why the `ray` command beside `python` cannot run, or undefined when it can. */
export declare function rayLacks(python: string): string | undefined;
/** The Chromium the browser tests drive. */
export declare function chromiumPath(env?: NodeJS.ProcessEnv): string;
/** Why Chromium cannot run, or undefined when it can. */
export declare function chromiumLacks(env?: NodeJS.ProcessEnv): string | undefined;
/** Why `command --version` does not run, or undefined when it does. */
export declare function commandLacks(command: string, env?: NodeJS.ProcessEnv): string | undefined;
/** Why the PostgreSQL test server cannot answer, or undefined when it answers `select 1`. */
export declare function postgresLacks(env?: NodeJS.ProcessEnv): Promise<string | undefined>;
/** Each part ARC_REQUIRE names that is missing here, as `<part>: <why>`. */
export declare function missingParts(env?: NodeJS.ProcessEnv): Promise<string[]>;
