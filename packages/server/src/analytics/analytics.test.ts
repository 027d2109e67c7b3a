import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Trace } from "@arc/core";
import { serve } from "@hono/node-server";
import { runArcCli } from "../cli/__fixtures__/run-arc-cli.ts";
import { setReleaseSettings } from "../deploy/release-settings.ts";
import { saveDataset } from "../failures/dataset-store.ts";
import { createApp } from "../http/app.ts";
import { Authenticator } from "../http/authenticator.ts";
import { saveCalibration } from "../judges/judge-store.ts";
import { ServerMetrics } from "../metrics/metrics-registry.ts";
import { tenantRoutes } from "../serve/tenant-routes.ts";
import type { Database } from "../store/database.ts";
import { createApiKey } from "../store/keys.ts";
import { registerModelVersion, transitionModelVersion } from "../store/model-registry.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { insertTraces } from "../store/trace-store.ts";
import type { TenantAnalytics } from "./tenant-analytics.ts";

const at = (day: string, minute = 0) => new Date(Date.parse(`2026-11-${day}T00:00:00Z`) + minute * 60_000);

/** A trace with one LLM step of `model` and its token usage; `gateway` marks it as the gateway records its calls. */
function trace(id: string, started: Date, model: string, usage: [number, number], gateway: boolean) {
  return Trace.parse({
    id,
    name: "chat",
    startedAt: started.toISOString(),
    status: "ok",
    metadata: gateway ? { source: "gateway" } : {},
    steps: [
      {
        id: `${id}-llm`,
        kind: "llm",
        startedAt: started.toISOString(),
        llm: {
          modelRequested: model,
          modelServed: model,
          messages: [{ role: "user", content: "q" }],
          output: { content: "a" },
          usage: { promptTokens: usage[0], completionTokens: usage[1], totalTokens: usage[0] + usage[1] },
        },
      },
    ],
  });
}

for (const target of databasesUnderTest()) {
  describe(`learning analytics on a seeded scenario on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let server: ReturnType<typeof serve>;
    let url: string;
    let key: string;
    let tenantId: string;
    const ids: Record<string, string> = {};

    /**
     * The scenario. Base serves 2026-11-03..09, its child from the promotion at 11-10 00:00 to 11-16; 40 gateway
     * traces on each side, one a minute from midnight. Failures per pattern, before / after the promotion:
     *   A 12 / 2, B 6 / 5, C 2 / 1 (first seen 11-03, 11-04, 11-05), and D (first seen 11-18) 3 failures on 11-18,
     *   on traces that are not the gateway's. Every other window trace passed.
     */
    before(async () => {
      db = await target.open();
      const tenant = await createTenant(db, "analytics");
      key = (await createApiKey(db, { role: "tenant", tenantId: tenant.id })).key;
      const t = tenant.id;
      tenantId = t;
      const base = await registerModelVersion(db, t, {
        name: "base",
        status: "promoted",
        artifactDir: "/m/b",
        actor: "t",
      });
      const child = await registerModelVersion(db, t, {
        name: "child",
        artifactDir: "/m/c",
        parentId: base.id,
        actor: "t",
      });
      const waiting = await registerModelVersion(db, t, { name: "waiting", artifactDir: "/m/w", actor: "t" });
      await transitionModelVersion(db, t, waiting.id, {
        from: ["candidate"],
        to: "validated",
        actor: "t",
        action: "validate",
      });
      Object.assign(ids, { base: base.id, child: child.id, waiting: waiting.id });

      const failuresOf: Record<string, [number, number]> = { A: [12, 2], B: [6, 5], C: [2, 1] };
      const traces = [];
      const verdicts: [string, string, string][] = [];
      const failures: [string, string, Date][] = [];
      for (const [side, day, model, usage] of [
        ["before", "03", base, [100, 20]],
        ["after", "10", child, [100, 10]],
      ] as const) {
        const patternsHere = Object.entries(failuresOf).flatMap(([p, n]) =>
          Array<string>(side === "before" ? n[0] : n[1]).fill(p),
        );
        for (let i = 0; i < 40; i++) {
          const id = `${side}-${i}`;
          traces.push(trace(id, at(day, i), model.name, usage as unknown as [number, number], true));
          verdicts.push([id, i < patternsHere.length ? "failed" : "passed", model.id]);
          if (i < patternsHere.length) failures.push([id, patternsHere[i], at(day, i)]);
        }
      }
      for (let i = 0; i < 3; i++) {
        traces.push(trace(`d-${i}`, at("18", i), "other", [50, 5], false));
        failures.push([`d-${i}`, "D", at("18", i)]);
      }
      await insertTraces(db, t, traces);
      for (const [traceId, status, version] of verdicts)
        await db.query(
          "insert into verdicts (tenant_id, trace_id, status, model_version, judgement) values ($1, $2, $3, $4, '{}')",
          [t, traceId, status, version],
        );
      for (const [traceId, pattern, started] of failures)
        await db.query(
          `insert into failures (tenant_id, trace_id, pattern_id, failure_class, started_at)
           values ($1, $2, $3, 'wrong_argument', $4)`,
          [t, traceId, `pat_${pattern}`, started.toISOString()],
        );
      for (const [p, first] of [
        ["A", "03"],
        ["B", "04"],
        ["C", "05"],
        ["D", "18"],
      ])
        await db.query(
          `insert into patterns (tenant_id, id, key, failure_class, label, count, first_seen, last_seen, counts_by_day,
                                 counts_by_model_version, counts_by_env, examples)
           values ($1, $2, $2, 'wrong_argument', $3, 1, $4, $4, '{}', '{}', '{}', '[]')`,
          [t, `pat_${p}`, `pattern ${p}`, at(first).toISOString()],
        );
      // the dataset draws on A only; the promotion is the child's canary against base
      await saveDataset(
        db,
        {
          kind: "eval",
          tenantId: t,
          version: "sha256:a",
          createdFrom: { seed: 0, patternIds: ["pat_A"], params: {} },
          rows: [
            {
              id: "r1",
              question: "q",
              solution: 1,
              env: "toolcall",
              meta: { sourceTraceIds: [], slice: "pattern" },
            },
          ],
          stats: {},
        },
        "t",
      );
      await db.query(
        `insert into deployments (tenant_id, id, candidate_id, control_id, status, share, policy, updated_at)
         values ($1, 'dep_1', $2, $3, 'promoted', 1, '{}', $4)`,
        [t, child.id, base.id, at("10").toISOString()],
      );
      await saveCalibration(db, t, {
        rubricVersion: 2,
        model: "judge-small",
        report: {
          items: 50,
          judged: 50,
          unjudged: 0,
          agreement: 0.7,
          kappa: 0.4,
          failed: { precision: 0.6, recall: 0.5 },
          classes: [],
        },
      });
      const app = createApp({
        db,
        authenticator: new Authenticator(db),
        metrics: new ServerMetrics(),
        maxBodyBytes: 1 << 20,
        tenantRoutes: tenantRoutes({ db, maxBodyBytes: 1 << 20 }),
      });
      server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
      await new Promise((resolve) => server.once("listening", resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async () => {
      await new Promise<void>((resolve) => server?.close(() => resolve()));
      await db?.close();
    });

    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    const analytics = async () =>
      (await call("GET", "/analytics?since=2026-10-27&until=2026-11-24")).body as TenantAnalytics;

    it("sets prices and a cost per failure, refusing bad ones with the field named", async () => {
      const bad = await call("PUT", "/analytics/settings", {
        prices: { base: { prompt: -1, completion: 2 } },
      });
      assert.equal(bad.status, 400);
      assert.match(bad.body.error.message, /prices\.base\.prompt/);
      const unknown = await call("PUT", "/analytics/settings", { price: {} });
      assert.equal(unknown.status, 400);
      assert.match(unknown.body.error.message, /price/);
      const set = await call("PUT", "/analytics/settings", {
        prices: { base: { prompt: 1, completion: 2 }, child: { prompt: 0.5, completion: 1 } },
        costPerFailure: 2.5,
      });
      assert.equal(set.status, 200);
      assert.deepEqual((await call("GET", "/analytics/settings")).body, set.body);
      const window = await call("GET", "/analytics?since=2026-11-24&until=2026-11-01");
      assert.equal(window.status, 400);
      assert.match(window.body.error.message, /^since: expected a time before until/);
      assert.equal((await call("GET", "/analytics?since=yesterday")).status, 400);
    });

    it("counts patterns per ISO week of their first failure", async () => {
      // A, B, C first seen 11-03..05 (the week of Monday 11-02); D on 11-18 (the week of Monday 11-16)
      assert.deepEqual((await analytics()).patternsPerWeek, [
        { week: "2026-11-02", patterns: 3 },
        { week: "2026-11-16", patterns: 1 },
      ]);
    });

    it("gives the fix success rate with each pattern's test, as computed by hand", async () => {
      const { fixSuccess } = await analytics();
      const byId = Object.fromEntries(fixSuccess.patterns.map((p) => [p.patternId, p]));
      // A: 12/40 = 0.30 before, 2/40 = 0.05 after; pooled 14/80 = 0.175, expected 7 failures a side;
      //    z = 0.25 / sqrt(0.175 · 0.825 · (1/40 + 1/40)) = 0.25 / 0.0849632 = 2.94245; p = 1 − Φ(2.94245) = 0.00163
      assert.deepEqual(
        [byId.pat_A.before, byId.pat_A.after],
        [
          { failures: 12, traces: 40, rate: 0.3 },
          { failures: 2, traces: 40, rate: 0.05 },
        ],
      );
      assert.ok(Math.abs((byId.pat_A.z as number) - 2.94245) < 1e-4);
      assert.ok(Math.abs((byId.pat_A.pValue as number) - 0.00163) < 1e-4);
      assert.equal(byId.pat_A.fixed, true);
      // B: 6/40 = 0.15 → 5/40 = 0.125; pooled 11/80 = 0.1375, expected 5.5 a side;
      //    z = 0.025 / sqrt(0.1375 · 0.8625 · 0.05) = 0.025 / 0.0770044 = 0.32466; p = 0.37272: not fixed
      assert.ok(Math.abs((byId.pat_B.z as number) - 0.32466) < 1e-4);
      assert.ok(Math.abs((byId.pat_B.pValue as number) - 0.37272) < 1e-4);
      assert.equal(byId.pat_B.fixed, false);
      // C: pooled 3/80, 1.5 failures expected a side: untested; D appeared after the promotion: not checked
      assert.equal(byId.pat_C.z, null);
      assert.match(
        byId.pat_C.untested as string,
        /fewer than 5 failures expected on a side \(1\.5 before, 1\.5 after\)/,
      );
      assert.equal(byId.pat_D, undefined);
      assert.deepEqual([fixSuccess.tested, fixSuccess.fixed, fixSuccess.rate], [2, 1, 0.5]);
      assert.match(fixSuccess.test, /two-proportion z-test \(pooled\), one-sided, α = 0.05/);
    });

    it("gives each model version's failure rate against its parent's, the cost and the failures avoided", async () => {
      const { improvement, cost } = await analytics();
      // base 20 of 40 failed (A 12 + B 6 + C 2); child 8 of 40 (2 + 5 + 1): 0.2 against its parent's 0.5
      assert.deepEqual(
        improvement,
        [
          {
            modelVersion: ids.base,
            name: "base",
            parentId: null,
            judged: 40,
            failures: 20,
            failureRate: 0.5,
            parentFailureRate: null,
            change: null,
          },
          {
            modelVersion: ids.child,
            name: "child",
            parentId: ids.base,
            judged: 40,
            failures: 8,
            failureRate: 0.2,
            parentFailureRate: 0.5,
            change: 0.2 - 0.5,
          },
        ].sort((a, b) => a.modelVersion.localeCompare(b.modelVersion)),
      );
      // base: 4,000 prompt × $1 + 800 completion × $2 per 1M = $0.0056; child: 4,000 × 0.5 + 400 × 1 = $0.0024;
      // "other" (D's traces, 150 / 15 tokens) has no price
      assert.deepEqual(cost.models, [
        { model: "base", promptTokens: 4000, completionTokens: 800, costUsd: 0.0056 },
        { model: "child", promptTokens: 4000, completionTokens: 400, costUsd: 0.0024 },
        { model: "other", promptTokens: 150, completionTokens: 15, costUsd: null },
      ]);
      assert.ok(Math.abs(cost.totalUsd - 0.008) < 1e-12);
      assert.deepEqual(cost.unpriced, ["other"]);
      // (0.5 − 0.2) × 40 = 12 failures avoided, × $2.5 = $30
      assert.ok(Math.abs(cost.failuresAvoided - 12) < 1e-9);
      assert.ok(Math.abs((cost.failuresAvoidedUsd as number) - 30) < 1e-9);
    });

    it("recommends a dataset for a growing pattern, an approval and a better judge, each with its reason", async () => {
      const before = (await analytics()).recommendations.map((r) => r.kind);
      assert.ok(!before.includes("candidate_awaiting_approval"), "no approval is required yet");
      await setReleaseSettings(db, tenantId, { gates: { requireApproval: true } });
      const { recommendations } = await analytics();
      assert.deepEqual(
        recommendations.map((r) => [r.kind, r.ids]),
        [
          ["growing_pattern_without_dataset", ["pat_D"]],
          ["candidate_awaiting_approval", [ids.waiting]],
          ["judge_low_calibration", []],
        ],
      );
      assert.match(
        recommendations[0].reason,
        /pattern "pattern D" grew from 0 failures to 3 in the last 7 days/,
      );
      assert.match(recommendations[2].reason, /agreement 0\.700 and kappa 0\.400/);
    });

    it("prints the same figures through arc analytics, and sets prices with arc analytics settings", async () => {
      const json = await runArcCli({ url, key }, [
        "analytics",
        "--since",
        "2026-10-27",
        "--until",
        "2026-11-24",
        "--json",
      ]);
      assert.equal(json.code, 0);
      assert.deepEqual(JSON.parse(json.out), await analytics());
      const table = await runArcCli({ url, key }, [
        "analytics",
        "--since",
        "2026-10-27",
        "--until",
        "2026-11-24",
      ]);
      assert.match(table.out, /fix success rate: 1 of 2 tested patterns = 0\.500/);
      assert.match(table.out, /failures avoided 12\.0 = 30\.00 USD/);
      const set = await runArcCli({ url, key }, [
        "analytics",
        "settings",
        "--prices",
        "other=2:4",
        "--cost-per-failure",
        "1",
      ]);
      assert.equal(set.code, 0);
      assert.deepEqual((await call("GET", "/analytics/settings")).body, {
        prices: { other: { prompt: 2, completion: 4 } },
        costPerFailure: 1,
      });
      const bad = await runArcCli({ url, key }, ["analytics", "settings", "--prices", "other=cheap"]);
      assert.equal(bad.code, 2);
      assert.match(bad.out, /--prices: expected <model>=<prompt>:<completion>/);
    });
  });
}
