/**
 * Hostile input, property-based, on every route of `arc serve` (OTLP, the gateway and the dashboard included), on
 * PGlite and on PostgreSQL: valid requests mutated with hostile bodies, raw non-JSON bodies, wrong content types,
 * hostile path parameters, query strings, headers and keys. Each case must be answered below 500 within its time
 * bound, refuse clearly (an error that says why), refuse a missing or another tenant's key, leave `/health` answering
 * and no prototype polluted, write nothing when refused or when only read, and store the whole batch when accepted.
 * Then tenant-supplied computation (deep and cyclic schemas, backtracking regexes, `$id`/`$ref` pairs across tenants)
 * is sent wherever Arc runs it: each attack is answered within the same bound while `/health` keeps answering, and no
 * tenant reads another's schema. The server runs in a child process (a case that wedges or pollutes it cannot stop
 * the runner; it is restarted). Each route and attack runs a fixed number of seeded cases (fast-check's numRuns) and
 * fails when fewer executed; every count is reported. ARC_FUZZ_SEED, ARC_FUZZ_RUNS (cases per route and attack) and
 * ARC_FUZZ_CASE_MS (the time bound) change a run; ARC_FUZZ_KEEP_GOING=1 lists every kind of failure, not the first.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { databasesUnderTest } from "../store/test-databases.ts";
import { prepareAttacks, runAttack } from "./__fixtures__/fuzz/attack-case.ts";
import { ATTACKS } from "./__fixtures__/fuzz/attacks.ts";
import {
  type CaseReport,
  MAX_RESTARTS,
  RUNS,
  runCounted,
  showReport,
} from "./__fixtures__/fuzz/counted-property.ts";
import { CASE_MS } from "./__fixtures__/fuzz/fuzz-case.ts";
import { fuzzRoute, runsOf } from "./__fixtures__/fuzz/fuzz-route.ts";
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
    const reports = new Map<string, CaseReport>();
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
        reports.set(report.name, report);
        t.diagnostic(showReport(report));
        if (failure) throw failure;
        assert.ok(report.executed >= report.minimum, `below its minimum: ${showReport(report)}`);
      });
    }

    describe("tenant-supplied computation: deep and cyclic schemas, backtracking regexes, $id/$ref pairs", () => {
      before(() => prepareAttacks(server), { timeout: 300_000 });
      for (const [i, attack] of ATTACKS.entries()) {
        const runs = RUNS ?? attack.runs;
        it(`${attack.name}: ${runs} cases, each below 500 within ${CASE_MS} ms, /health answering meanwhile, nothing of one tenant read by another`, {
          timeout: runs * 60_000 + 150_000,
        }, async (t) => {
          if (server.restarts > MAX_RESTARTS) {
            assert.fail(`not run: the server was wedged and restarted ${server.restarts} times`);
          }
          const { report, failure } = await runCounted(
            server,
            {
              name: attack.name,
              minimum: runs,
              cases: attack.values,
              run: (value) => runAttack(server, attack, value),
            },
            SEED + 1000 + i,
            KEEP_GOING,
          );
          reports.set(report.name, report);
          t.diagnostic(showReport(report));
          if (failure) throw failure;
          assert.ok(report.executed >= report.minimum, `below its minimum: ${showReport(report)}`);
        });
      }
    });

    it("executed at least its minimum of cases on every route and attack", (t) => {
      const names = [...ROUTES.map((r) => `${r.method} ${r.path}`), ...ATTACKS.map((a) => a.name)];
      const short: string[] = [];
      let executed = 0;
      for (const name of names) {
        const report = reports.get(name);
        executed += report?.executed ?? 0;
        if (!report || report.executed < report.minimum)
          short.push(report ? showReport(report) : `${name}: not run`);
      }
      t.diagnostic(`${executed} cases executed on ${ROUTES.length} routes and ${ATTACKS.length} attacks`);
      assert.deepEqual(short, [], "routes and attacks below their minimum of executed cases");
    });
  });
}
