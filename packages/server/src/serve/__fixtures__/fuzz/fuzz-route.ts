/** A route's property: its cases mutated from valid requests, run and counted by `runCounted`. */

import { type Case, caseArb } from "./case-arbitrary.ts";
import { type CaseReport, type CountedProperty, RUNS, runCounted } from "./counted-property.ts";
import { runCase } from "./fuzz-case.ts";
import type { FuzzedServer } from "./fuzzed-server.ts";
import type { RouteSpec } from "./route-spec.ts";

/** Cases a route runs: its own number, else by method (writes cost more and change more than reads). */
export function runsOf(route: RouteSpec): number {
  return RUNS ?? route.runs ?? { GET: 10, DELETE: 12, POST: 20, PUT: 20 }[route.method];
}

/** Runs a route's cases with `seed`; see `runCounted`. */
export function fuzzRoute(
  server: FuzzedServer,
  route: RouteSpec,
  seed: number,
  keepGoing: boolean,
): Promise<{ report: CaseReport; failure?: Error }> {
  const property: CountedProperty<Case> = {
    name: `${route.method} ${route.path}`,
    minimum: runsOf(route),
    cases: caseArb(route),
    run: (c, shrinking) => runCase(server, route, c, shrinking),
  };
  return runCounted(server, property, seed, keepGoing);
}
