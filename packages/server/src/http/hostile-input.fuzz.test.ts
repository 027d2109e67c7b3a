/**
 * Hostile input, property-based, on every route of `arc serve` (OTLP, the gateway and the dashboard included), on
 * PGlite and on PostgreSQL: valid requests mutated with hostile bodies, raw non-JSON bodies, wrong content types,
 * hostile path parameters, query strings, headers and keys. Each case must be answered below 500 within its time
 * bound, refuse clearly (an error that says why), refuse a missing or another tenant's key, leave `/health` answering
 * and no prototype polluted, write nothing when refused or when only read, and store the whole batch when accepted.
 * The server runs in a child process (a case that wedges or pollutes it cannot stop the runner; it is restarted).
 * Each route runs a fixed number of seeded cases (fast-check's numRuns) and fails when fewer executed; every route's
 * count is reported. ARC_FUZZ_SEED, ARC_FUZZ_RUNS (cases per route) and ARC_FUZZ_CASE_MS (the time bound) change a
 * run; ARC_FUZZ_KEEP_GOING=1 lists every kind of failure instead of the first.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { databasesUnderTest } from "../store/test-databases.ts";
import {
  fuzzRoute,
  MAX_RESTARTS,
  type RouteReport,
  runsOf,
  showReport,
} from "./__fixtures__/fuzz/fuzz-route.ts";
import { FuzzedServer } from "./__fixtures__/fuzz/fuzzed-server.ts";
import { DELETE_ROUTES, GET_ROUTES } from "./__fixtures__/fuzz/read-routes.ts";
import { WRITE_ROUTES } from "./__fixtures__/fuzz/write-routes.ts";

const SEED = Number(process.env.ARC_FUZZ_SEED ?? 29);
const KEEP_GOING = process.env.ARC_FUZZ_KEEP_GOING === "1";
/** Writes first (they make what the reads read), then reads, then deletes. */
const ROUTES = [...WRITE_ROUTES, ...GET_ROUTES, ...DELETE_ROUTES];

for (const target of databasesUnderTest()) {
  describe(`hostile input on every route, on ${target.name}`, { skip: target.skip }, () => {
    const server = new FuzzedServer(target.name);
    const reports = new Map<string, RouteReport>();
    before(() => server.start(), { timeout: 150_000 });
    after(() => server.stop());

    it("has a fuzzed route for every route the server registers", () => {
      const registered = [
        ...new Set(
          server.ready.routes
            .filter((r) => ["GET", "POST", "PUT", "PATCH", "DELETE"].includes(r.method))
            .map((r) => `${r.method} ${r.path}`),
        ),
      ].sort();
      assert.deepEqual(
        registered,
        ROUTES.map((r) => `${r.method} ${r.path}`).sort(),
        "every route needs an entry (valid requests, checks) in the fuzz suite's routes",
      );
    });

    for (const [i, route] of ROUTES.entries()) {
      it(`${route.method} ${route.path}: ${runsOf(route)} cases, each below 500 in time, clear refusals, /health up, no pollution, no partial write`, {
        timeout: runsOf(route) * 30_000 + 150_000,
      }, async (t) => {
        if (server.restarts > MAX_RESTARTS) {
          assert.fail(`not run: the server was wedged and restarted ${server.restarts} times`);
        }
        const { report, failure } = await fuzzRoute(server, route, SEED + i, KEEP_GOING);
        reports.set(report.route, report);
        t.diagnostic(showReport(report));
        if (failure) throw failure;
        assert.ok(report.executed >= report.minimum, `below its minimum: ${showReport(report)}`);
      });
    }

    it("executed at least its minimum of cases on every route", (t) => {
      const short: string[] = [];
      let executed = 0;
      for (const route of ROUTES) {
        const report = reports.get(`${route.method} ${route.path}`);
        executed += report?.executed ?? 0;
        if (!report || report.executed < report.minimum)
          short.push(report ? showReport(report) : `${route.method} ${route.path}: not run`);
      }
      t.diagnostic(`${executed} cases executed on ${ROUTES.length} routes`);
      assert.deepEqual(short, [], "routes below their minimum of executed cases");
    });
  });
}
