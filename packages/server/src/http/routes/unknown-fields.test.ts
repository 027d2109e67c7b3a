import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Database } from "../../store/database.ts";
import { databasesUnderTest } from "../../store/test-databases.ts";
import { startTestAppServer, type TestAppServer } from "../test-app-server.ts";
import { datasetRoutes } from "./dataset-routes.ts";
import { judgeRoutes } from "./judge-routes.ts";
import { patternRoutes } from "./pattern-routes.ts";
import { rewardRoutes } from "./reward-routes.ts";

/** Answers of the routes below: an error names its field. */
type Answer = { error?: { message: string; field?: string }; [key: string]: unknown };

for (const target of databasesUnderTest()) {
  describe(`unknown fields and out-of-range numbers on the judge, reward, pattern and dataset routes on ${target.name}`, {
    skip: target.skip,
  }, () => {
    let db: Database;
    let server: TestAppServer;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${server.tenants[0].key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Answer };
    };
    /** Asserts a 400 naming `field` whose message matches `message`. */
    const refused = (
      answer: { status: number; body: Answer },
      field: string | undefined,
      message: RegExp,
    ) => {
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal(answer.body.error?.field, field);
      assert.match(answer.body.error?.message ?? "", message);
    };

    before(async () => {
      db = await target.open();
      const maxBodyBytes = 1 << 20;
      server = await startTestAppServer(db, {
        maxBodyBytes,
        tenantRoutes: [
          { path: "/", app: patternRoutes({ db, maxBodyBytes }) },
          { path: "/", app: datasetRoutes({ db, maxBodyBytes }) },
          { path: "/", app: rewardRoutes({ db, maxBodyBytes, upstreams: {} }) },
          {
            path: "/",
            app: judgeRoutes({
              db,
              maxBodyBytes,
              upstreams: { judges: { baseUrl: "http://127.0.0.1:9/v1" } },
            }),
          },
        ],
      });
    });
    after(async () => {
      await server?.close();
      await db?.close();
    });

    it("refuses a judge model with a field it does not have, or a budget past what is stored, and keeps none", async () => {
      const model = { upstream: "judges", model: "judge" };
      refused(
        await call("PUT", "/judges/model", { ...model, callsPerMinut: 30 }),
        "callsPerMinut",
        /^callsPerMinut: not a field of a judge model; its fields are upstream, model, callsPerMinute, tokensPerMinute$/,
      );
      refused(
        await call("PUT", "/judges/model", { ...model, tokensPerMinute: 3e9 }),
        "tokensPerMinute",
        /expected a whole number from 1 to 2147483647, got 3000000000/,
      );
      refused(
        await call("PUT", "/judges/model", [model]),
        undefined,
        /expected a judge model \{upstream, model/,
      );
      assert.equal((await call("GET", "/judges")).body.model, null);
      const set = await call("PUT", "/judges/model", { ...model, tokensPerMinute: 2_147_483_647 });
      assert.equal(set.status, 200, JSON.stringify(set.body));
    });

    it("refuses a rubric class, a judge test or a calibration with a field it does not have", async () => {
      const rubric = {
        criteria: ["answers the question"],
        classes: [{ name: "wrong_city", description: "names another city", severity: "high", examples: [] }],
      };
      refused(
        await call("PUT", "/judges/rubric", rubric),
        "classes[0].examples",
        /not a field of a rubric class/,
      );
      refused(await call("POST", "/judges/test", { traceId: "t1", trace: {} }), "trace", /of a judge test/);
      refused(await call("POST", "/judges/calibrate", { limit: 5, dryRun: true }), "dryRun", /calibration/);
      refused(await call("POST", "/judges/calibrate", null), undefined, /expected a JSON object \{limit\?\}/);
    });

    it("refuses a reward request, row or context with a field it does not have", async () => {
      const row = {
        env: "toolcall",
        question: "Weather in Oslo in celsius?",
        answer: '{"tool":"get_weather","args":{"city":"Oslo","unit":"c"}}',
        solution: { tool: "get_weather", args: { city: "Oslo", unit: "c" } },
      };
      refused(
        await call("POST", "/rewards", { items: [row], kindd: "verifier" }),
        "kindd",
        /^kindd: not a field of a reward request; its fields are kind, items$/,
      );
      refused(
        await call("POST", "/rewards", { items: [{ ...row, soluton: row.solution }] }),
        "items.0.soluton",
        /not a field of a reward row/,
      );
      refused(
        await call("POST", "/rewards", { items: [{ ...row, context: { messages: [], tool: [] } }] }),
        "items.0.context.tool",
        /not a field of a row's context; its fields are messages, tools/,
      );
      refused(await call("POST", "/rewards", { items: [null] }), "items.0", /expected a row/);
      const scored = await call("POST", "/rewards", { items: [row] });
      assert.equal(scored.status, 200, JSON.stringify(scored.body));
    });

    it("refuses a query parameter the pattern and dataset lists do not have, naming it", async () => {
      refused(await call("GET", "/patterns?limt=5"), undefined, /Unrecognized key\(s\) in object: 'limt'/);
      refused(await call("GET", "/datasets?knd=eval"), undefined, /Unrecognized key\(s\) in object: 'knd'/);
      assert.equal((await call("GET", "/patterns?limit=5")).status, 200);
      assert.equal((await call("GET", "/datasets?kind=eval")).status, 200);
    });
  });
}
