/**
 * A property run by fast-check for a fixed number of cases, each of which must execute: the cases it executed are
 * counted (with their statuses and the slowest) so the suite can report them and fail below the minimum.
 */
import fc from "fast-check";
import { Fatal, type FuzzedServer, NotSent } from "./fuzzed-server.ts";

/** Cases per property, when set: every route and attack runs (and must execute) this many instead of its own. */
export const RUNS = process.env.ARC_FUZZ_RUNS ? Number(process.env.ARC_FUZZ_RUNS) : undefined;
/** Time a property's first failure may be shrunk in; shrink steps past it pass untried. */
const SHRINK_MS = 3_000;
/** Restarts of a wedged server per database before the remaining properties give up. */
export const MAX_RESTARTS = 3;

/** What executing one case came to: its status (0 when it got none), and how long the server worked on it. */
export interface CaseOutcome {
  status: number;
  ms: number;
}

/** What a property's run executed. */
export interface CaseReport {
  name: string;
  /** The fewest cases it must execute: every case fast-check generated for it. */
  minimum: number;
  /** Cases sent and checked before any failure (shrink steps not counted). */
  executed: number;
  /** Executed cases by status class (`2xx`, `3xx`, `4xx`, `5xx`, `none` for no answer, `failed`). */
  statuses: Record<string, number>;
  /** The slowest case's time (see CaseOutcome.ms). */
  slowestMs: number;
}

/** The report as one line. */
export function showReport(r: CaseReport): string {
  const statuses = Object.entries(r.statuses)
    .sort()
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
  return `${r.name}: executed ${r.executed} of at least ${r.minimum} (${statuses || "none"}), slowest ${Math.round(r.slowestMs)} ms`;
}

/** One line per kind of failure: what went wrong and the server's error, ids and numbers left out. */
const kindOf = (message: string) =>
  message
    .split("\n")
    .slice(1)
    .join(" ")
    .replace(/\b(mv|dep|run|ten|val|ds|key)_[\w-]+/g, "ID")
    .replace(/\d+/g, "N")
    .slice(0, 200);

/** A property to run: its cases, and how one runs (null: passed untried while shrinking). */
export interface CountedProperty<T> {
  name: string;
  minimum: number;
  cases: fc.Arbitrary<T>;
  run(value: T, shrinking: boolean): Promise<CaseOutcome | null>;
}

/**
 * Runs a property with `seed` for `minimum` cases. The first failure is shrunk and returned (or, with `keepGoing`,
 * the first case of each kind of failure is collected and all are returned). After a failure that left the server
 * untrustworthy it is restarted and the remaining cases pass untried, so they are not counted.
 */
export async function runCounted<T>(
  server: FuzzedServer,
  property: CountedProperty<T>,
  seed: number,
  keepGoing: boolean,
): Promise<{ report: CaseReport; failure?: Error }> {
  const report: CaseReport = {
    name: property.name,
    minimum: property.minimum,
    executed: 0,
    statuses: {},
    slowestMs: 0,
  };
  const kinds = new Map<string, string>();
  let shrinkDeadline = Number.POSITIVE_INFINITY;
  let failed = false;
  let fatal = false;
  const checked = fc.asyncProperty(property.cases, async (value: T) => {
    if (fatal || performance.now() > shrinkDeadline) return;
    const counted = !failed;
    try {
      const outcome = await property.run(value, failed && !keepGoing);
      if (counted && outcome) {
        report.executed++;
        const status = outcome.status ? `${String(outcome.status)[0]}xx` : "none";
        report.statuses[status] = (report.statuses[status] ?? 0) + 1;
        report.slowestMs = Math.max(report.slowestMs, outcome.ms);
      }
    } catch (error) {
      if (counted && !(error instanceof NotSent)) {
        report.executed++;
        report.statuses.failed = (report.statuses.failed ?? 0) + 1;
      }
      if (error instanceof Fatal) {
        fatal = !keepGoing || server.restarts >= MAX_RESTARTS;
        await server.restart();
      }
      if (!keepGoing) {
        if (!failed) shrinkDeadline = performance.now() + SHRINK_MS;
        failed = true;
        throw error;
      }
      const message = (error as Error).message;
      if (!kinds.has(kindOf(message))) kinds.set(kindOf(message), message);
    }
  });
  try {
    await fc.assert(checked, { seed, numRuns: property.minimum });
  } catch (error) {
    return { report, failure: error as Error };
  }
  if (kinds.size) {
    const failure = new Error(
      `${kinds.size} kind(s) of failure (seed ${seed}):\n${[...kinds.values()].join("\n")}`,
    );
    return { report, failure };
  }
  return { report };
}
