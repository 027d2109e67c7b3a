import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  type FailurePattern,
  failedVerdict,
  failureRecord,
  type Judgement,
  passedVerdict,
  Trace,
  traceModelVersion,
} from "@arc/core";
import { serve } from "@hono/node-server";
import { runArcCli } from "../cli/__fixtures__/run-arc-cli.ts";
import { setReleaseSettings } from "../deploy/release-settings.ts";
import { saveDataset } from "../failures/dataset-store.ts";
import { insertFailures } from "../failures/failure-store.ts";
import { savePatterns } from "../failures/pattern-store.ts";
import { upsertVerdicts } from "../failures/verdict-store.ts";
import { createApp } from "../http/app.ts";
import { Authenticator } from "../http/authenticator.ts";
import { putJudgeModel, putRubric, saveCalibration } from "../judges/judge-store.ts";
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

/**
 * A trace with one LLM step answered by `model` (served by its name, version its id) and its token usage; `gateway`
 * marks it as the gateway records its calls.
 */
function trace(
  id: string,
  started: Date,
  model: { id: string; name: string },
  usage: readonly number[],
  gateway: boolean,
) {
  return Trace.parse({
    id,
    name: "chat",
    startedAt: started.toISOString(),
    status: "ok",
    metadata: gateway ? { source: "gateway", modelVersion: model.id } : {},
    steps: [
      {
        id: `${id}-llm`,
        kind: "llm",
        startedAt: started.toISOString(),
        llm: {
          modelRequested: model.name,
          modelServed: model.name,
          modelVersion: model.id,
          messages: [{ role: "user", content: "q" }],
          output: { content: "a" },
          usage: { promptTokens: usage[0], completionTokens: usage[1], totalTokens: usage[0] + usage[1] },
        },
      },
    ],
  });
}

/** The judgement the detection worker would store: failed into `pattern`'s signature, else passed. */
function judgement(t: Trace, pattern: string | undefined): Judgement {
  const verdict = pattern
    ? failedVerdict(t.id, "verifier", {
        class: "wrong_argument",
        severity: "medium",
        message: `bad argument (${pattern})`,
        signature: pattern,
      })
    : passedVerdict(t.id, "verifier", "ok");
  return {
    traceId: t.id,
    status: verdict.status,
    primary: pattern ? verdict : undefined,
    verdicts: [verdict],
  };
}

/** A pattern as the clusterer saves it, first seen at `first`. */
function pattern(tenantId: string, id: string, first: Date): FailurePattern {
  return {
    id,
    tenantId,
    key: `wrong_argument||${id}`,
    class: "wrong_argument",
    label: `pattern ${id.slice(4)}`,
    count: 1,
    firstSeen: first.toISOString(),
    lastSeen: first.toISOString(),
    countsByDay: {},
    countsByModelVersion: {},
    countsByEnv: {},
    examples: [],
    topTerms: [],
  };
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
     * The scenario. Base serves 2026-11-03 (40 gateway traces, one a minute from midnight); the promotion of its child
     * in place of it is at 11-10 00:00; the child serves 40 gateway traces on 11-10. Failures per pattern, before /
     * after the promotion: A 12 / 2, B 6 / 5, C 2 / 1 (first seen 11-03, 11-04, 11-05); D (first seen 11-18) has 3
     * failures on 11-18, on traces that are not the gateway's. Every other trace passed. Traces go in through the
     * ingest's store function, verdicts, failures and patterns through the detection worker's.
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
      const seeded: { trace: Trace; pattern: string | undefined }[] = [];
      for (const [side, day, model, usage] of [
        ["before", "03", base, [100, 20]],
        ["after", "10", child, [100, 10]],
      ] as const) {
        const patternsHere = Object.entries(failuresOf).flatMap(([p, n]) =>
          Array<string>(side === "before" ? n[0] : n[1]).fill(`pat_${p}`),
        );
        for (let i = 0; i < 40; i++)
          seeded.push({
            trace: trace(`${side}-${i}`, at(day, i), model, usage, true),
            pattern: patternsHere[i],
          });
      }
      const other = { id: "mv_other", name: "other" };
      for (let i = 0; i < 3; i++)
        seeded.push({ trace: trace(`d-${i}`, at("18", i), other, [50, 5], false), pattern: "pat_D" });
      // the rows the detection worker writes for these traces: verdicts, failure memberships, the patterns projection
      await insertTraces(
        db,
        t,
        seeded.map((s) => s.trace),
      );
      const judged = seeded.map((s) => ({ ...s, judgement: judgement(s.trace, s.pattern) }));
      await upsertVerdicts(
        db,
        t,
        judged.map((j) => ({
          traceId: j.trace.id,
          judgement: j.judgement,
          patternId: j.pattern ?? null,
          modelVersion: traceModelVersion(j.trace) ?? null,
        })),
      );
      await insertFailures(
        db,
        t,
        judged.flatMap((j) => {
          const failure = failureRecord(j.trace, j.judgement);
          return failure && j.pattern ? [{ failure, patternId: j.pattern }] : [];
        }),
      );
      await savePatterns(db, t, [
        pattern(t, "pat_A", at("03")),
        pattern(t, "pat_B", at("04")),
        pattern(t, "pat_C", at("05")),
        pattern(t, "pat_D", at("18")),
      ]);
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
      // finishCanary stamps the promotion with now(); the scenario's promotion is in the past, so it is written as
      // finishCanary leaves it: status promoted, share 1, updated_at the time of promotion
      await db.query(
        `insert into deployments (tenant_id, id, candidate_id, control_id, status, share, policy, updated_at)
         values ($1, 'dep_1', $2, $3, 'promoted', 1, '{}', $4)`,
        [t, child.id, base.id, at("10").toISOString()],
      );
      await saveCalibration(db, t, {
        rubricVersion: 1,
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
      const vague = await call("GET", "/analytics?since=yesterday");
      assert.equal(vague.status, 400);
      assert.match(vague.body.error.message, /\bsince: expected an ISO 8601 date/);
      const local = await call("GET", "/analytics?until=2026-11-24T00:00:00");
      assert.equal(local.status, 400, "a date-time without its offset is ambiguous");
      assert.match(local.body.error.message, /\buntil: expected an ISO 8601 date/);
      const span = await call("GET", "/analytics?fixWindowDays=0");
      assert.equal(span.status, 400);
      assert.match(span.body.error.message, /\bfixWindowDays: /);
      const stray = await call("GET", "/analytics?from=2026-11-01");
      assert.equal(stray.status, 400);
      assert.match(stray.body.error.message, /from/);
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
      //    z = (0.30 − 0.05) / sqrt(0.175 · 0.825 · (1/40 + 1/40)) = 0.25 / sqrt(0.00721875) = 0.25 / 0.0849632273
      //      = 2.9424494317; p = 1 − Φ(2.9424494) = 0.0016281 (< 0.05: fixed)
      assert.deepEqual(
        [byId.pat_A.before, byId.pat_A.after],
        [
          { failures: 12, traces: 40, rate: 0.3 },
          { failures: 2, traces: 40, rate: 0.05 },
        ],
      );
      assert.ok(Math.abs((byId.pat_A.z as number) - 2.9424494317) < 1e-9);
      assert.ok(Math.abs((byId.pat_A.pValue as number) - 0.0016281) < 1e-4);
      assert.equal(byId.pat_A.fixed, true);
      // B: 6/40 = 0.15 → 5/40 = 0.125; pooled 11/80 = 0.1375, expected 5.5 a side;
      //    z = 0.025 / sqrt(0.1375 · 0.8625 · 0.05) = 0.025 / sqrt(0.00592969) = 0.025 / 0.0770044642
      //      = 0.3246565024; p = 1 − Φ(0.3246565) = 0.3727205: not fixed
      assert.deepEqual(
        [byId.pat_B.before, byId.pat_B.after],
        [
          { failures: 6, traces: 40, rate: 0.15 },
          { failures: 5, traces: 40, rate: 0.125 },
        ],
      );
      assert.ok(Math.abs((byId.pat_B.z as number) - 0.3246565024) < 1e-9);
      assert.ok(Math.abs((byId.pat_B.pValue as number) - 0.3727205) < 1e-4);
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
      // dep_1 put child in place of base (its control): base failed 20 of 40 judged calls in the 7 days before the
      // promotion (11-03..11-09) = 0.5; child 8 of 40 = 0.2 in the window; (0.5 − 0.2) × 40 = 12 failures avoided,
      // × $2.5 a failure = $30
      assert.deepEqual(
        cost.avoided.map((v) => ({ ...v, failuresAvoided: Number(v.failuresAvoided.toFixed(9)) })),
        [
          {
            modelVersion: ids.child,
            deploymentId: "dep_1",
            baselineId: ids.base,
            baselineFailureRate: 0.5,
            failureRate: 0.2,
            judged: 40,
            failuresAvoided: 12,
          },
        ],
      );
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
      assert.match(recommendations[2].reason, /agreement 0\.700 and kappa 0\.400, below 0\.8 or 0\.6/);
      // the judge switched on with the rubric and model it was calibrated with: still low; a new rubric version is
      // not calibrated at all
      const rubric = {
        criteria: ["answers the question"],
        classes: [{ name: "wrong", description: "wrong", severity: "high" }],
      };
      await putRubric(db, tenantId, rubric);
      await putJudgeModel(db, tenantId, { upstream: "judges", model: "judge-small" }, { judges: {} });
      const judged = async () =>
        (await analytics()).recommendations.filter((r) => r.kind.startsWith("judge_"));
      assert.deepEqual(
        (await judged()).map((r) => r.kind),
        ["judge_low_calibration"],
      );
      await putRubric(db, tenantId, rubric);
      const [stale] = await judged();
      assert.equal(stale.kind, "judge_uncalibrated");
      assert.match(
        stale.reason,
        /runs rubric v2 on judge-small, but its latest calibration \(\d{4}-\d{2}-\d{2}\) was of rubric v1 on judge-small/,
      );
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
      assert.match(table.out, new RegExp(`${ids.child} +dep_1 +${ids.base} +0\\.500 +0\\.200 +40 +12\\.0\n`));
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
