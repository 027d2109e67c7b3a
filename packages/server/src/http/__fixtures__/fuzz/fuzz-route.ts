/**
 * A route's property run by fast-check for a fixed number of cases, each of which must execute: the cases it
 * executed are counted (with their statuses and the slowest answer) so the suite can report them and fail below the
 * route's minimum.
 */
import fc from "fast-check";
import { type Case, caseArb, runCase } from "./fuzz-case.ts";
import { Fatal, type FuzzedServer, NotSent } from "./fuzzed-server.ts";
import type { RouteSpec } from "./route-spec.ts";

/** Cases per route, when set: every route runs (and must execute) this many instead of its own number. */
const RUNS = process.env.ARC_FUZZ_RUNS ? Number(process.env.ARC_FUZZ_RUNS) : undefined;
/** Time a route's first failure may be shrunk in; shrink steps past it pass untried. */
const SHRINK_MS = 3_000;
/** Restarts of a wedged server per database before the remaining routes give up. */
export const MAX_RESTARTS = 3;

/** Cases a route runs: its own number, else by method (writes cost more and change more than reads). */
export function runsOf(route: RouteSpec): number {
  return RUNS ?? route.runs ?? { GET: 10, DELETE: 12, POST: 20, PUT: 20 }[route.method];
}

/** What a route's run executed. */
export interface RouteReport {
  route: string;
  /** The fewest cases it must execute: every case fast-check generated for it. */
  minimum: number;
  /** Cases sent and checked before any failure (shrink steps not counted). */
  executed: number;
  /** Executed cases by status class (`2xx`, `3xx`, `4xx`, `5xx`, `none` for no answer). */
  statuses: Record<string, number>;
  /** The slowest answer, or detection pass of an accepted ingest. */
  slowestMs: number;
}

/** The report as one line. */
export function showReport(r: RouteReport): string {
  const statuses = Object.entries(r.statuses)
    .sort()
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
  return `${r.route}: executed ${r.executed} of at least ${r.minimum} (${statuses || "none"}), slowest ${Math.round(r.slowestMs)} ms`;
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

/**
 * Runs a route's property with its own seed for `runsOf(route)` cases. The first failure is shrunk and returned (or,
 * with `keepGoing`, the first case of each kind of failure is collected and all are returned). After a failure that
 * left the server untrustworthy it is restarted and the remaining cases pass untried, so they are not counted.
 */
export async function fuzzRoute(
  server: FuzzedServer,
  route: RouteSpec,
  seed: number,
  keepGoing: boolean,
): Promise<{ report: RouteReport; failure?: Error }> {
  const report: RouteReport = {
    route: `${route.method} ${route.path}`,
    minimum: runsOf(route),
    executed: 0,
    statuses: {},
    slowestMs: 0,
  };
  const kinds = new Map<string, string>();
  let shrinkDeadline = Number.POSITIVE_INFINITY;
  let failed = false;
  let fatal = false;
  const property = fc.asyncProperty(caseArb(route), async (c: Case) => {
    if (fatal || performance.now() > shrinkDeadline) return;
    const counted = !failed;
    try {
      const outcome = await runCase(server, route, c, failed && !keepGoing);
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
    await fc.assert(property, { seed, numRuns: report.minimum });
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
