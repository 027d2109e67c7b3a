import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Database } from "../store/database.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { startTestAppServer, type TestAppServer } from "./test-app-server.ts";

/** An OTLP span with valid ids and times; `extra` overrides its fields. */
function span(n: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    traceId: "a".repeat(31) + n.toString(16),
    spanId: "b".repeat(15) + n.toString(16),
    name: `span-${n}`,
    startTimeUnixNano: "1767225600000000000",
    endTimeUnixNano: "1767225601000000000",
    attributes: [{ key: "gen_ai.operation.name", value: { stringValue: "chat" } }],
    ...extra,
  };
}

/** An answer of the API: an error, or OTLP's partial success. */
type Answer = {
  error: { message: string; field?: string };
  partialSuccess: { rejectedSpans?: number; errorMessage?: string };
};

const otlpExport = (spans: unknown[]) => ({ resourceSpans: [{ scopeSpans: [{ spans }] }] });

for (const target of databasesUnderTest()) {
  describe(`hostile ingest and OTLP input on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let server: TestAppServer;
    before(async () => {
      db = await target.open();
      server = await startTestAppServer(db, { maxBodyBytes: 8 * 1024 * 1024 });
    });
    after(async () => {
      await server?.close();
      await db?.close();
    });

    const post = async (path: string, body: string | object) => {
      const res = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.tenants[0].key}`, "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Answer };
    };
    const count = async (table: string) =>
      Number((await db.query<{ n: number }>(`select count(*)::int as n from ${table}`))[0].n);
    const trace = (id: string, extra = "", step = "") =>
      `{"traces":[{"id":"${id}","startedAt":"2026-01-01T00:00:00Z"${extra},"steps":[{"id":"s1","kind":"llm","startedAt":"2026-01-01T00:00:00Z"${step}}]}]}`;

    /** Posts a trace body that must be refused with a 400 naming `field`, and checks nothing was stored. */
    const refused = async (body: string, field: string, message: RegExp) => {
      const before = await count("traces");
      const res = await post("/v1/traces", body);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.field, field);
      assert.match(res.body.error.message, message);
      assert.equal(await count("traces"), before);
      assert.equal((await fetch(`${server.url}/health`)).status, 200);
    };

    it("refuses a trace nested 2,000 levels deep with a 400 naming where, before storing it", async () => {
      const deep = `${"[".repeat(2000)}${"]".repeat(2000)}`;
      await refused(
        trace("deep", `,"metadata":{"x":${deep}}`),
        `traces.0.metadata.x${".0".repeat(60)}`,
        /nested deeper than 64 levels/,
      );
    });

    it("refuses a lone surrogate, which jsonb cannot store, naming the field", async () => {
      await refused(trace("lone", `,"name":"a\\ud800b"`), "traces.0.name", /lone UTF-16 surrogate/);
      await refused(trace("lone-key", `,"metadata":{"k\\udc00":1}`), "traces.0.metadata.k\udc00", /lone/);
      const paired = await post("/v1/traces", trace("paired", `,"name":"\\ud83d\\ude00"`));
      assert.equal(paired.status, 200);
    });

    it("refuses token counts beyond a 32-bit integer", async () => {
      await refused(
        trace("big", "", `,"llm":{"usage":{"promptTokens":3e9}}`),
        "traces.0.steps.0.llm.usage.promptTokens",
        /at most 2147483647/,
      );
    });

    it("refuses dates a timestamp cannot hold: year 0000 and an offset of +25:00", async () => {
      await refused(trace("y0", `,"endedAt":"0000-01-01T00:00:00Z"`), "traces.0.endedAt", /years 0001-9999/);
      await refused(trace("tz", `,"endedAt":"2026-01-01T00:00:00+25:00"`), "traces.0.endedAt", /±14:00/);
      const edge = await post("/v1/traces", trace("tz-ok", `,"endedAt":"2026-01-01T10:00:00+14:00"`));
      assert.equal(edge.status, 200);
    });

    it("refuses a number past a double's range (1e400 parses as Infinity and would be stored as null)", async () => {
      const message = /the number is out of range: a JSON number must be finite/;
      await refused(trace("inf", "", `,"latencyMs":1e400`), "traces.0.steps.0.latencyMs", message);
      await refused(trace("ninf", `,"metadata":{"ratio":[-1e999]}`), "traces.0.metadata.ratio.0", message);
      const feedback = await post("/v1/feedback", '{"id":"fb-inf","traceId":"seed","score":1e400}');
      assert.equal(feedback.status, 400);
      assert.equal(feedback.body.error.field, "score");
    });

    it("refuses an OTLP export whose repeated fields are not arrays with a 400 naming the path", async () => {
      const before = await count("steps");
      for (const [body, field] of [
        [{ resourceSpans: [{ scopeSpans: [{ spans: {} }] }] }, "resourceSpans.0.scopeSpans.0.spans"],
        [{ resourceSpans: [{ scopeSpans: { spans: [span(1)] } }] }, "resourceSpans.0.scopeSpans"],
        [{ resourceSpans: [{ scopeSpans: [7] }] }, "resourceSpans.0.scopeSpans.0"],
        [{ resourceSpans: ["x"] }, "resourceSpans.0"],
        [{ resourceSpans: {} }, "resourceSpans"],
      ] as const) {
        const res = await post("/v1/otlp/v1/traces", body);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.equal(res.body.error.field, field);
        assert.match(res.body.error.message, new RegExp(`^${field.replaceAll(".", "\\.")}: expected an`));
      }
      assert.equal(await count("steps"), before);
      const empty = await post("/v1/otlp/v1/traces", { resourceSpans: [{ scopeSpans: [{ spans: null }] }] });
      assert.deepEqual(empty, { status: 200, body: { partialSuccess: {} } });
    });

    it("takes sampling parameters such as seed 1e300 as the data they are", async () => {
      const res = await post("/v1/traces", trace("seed", "", `,"llm":{"params":{"seed":1e300}}`));
      assert.equal(res.status, 200);
    });

    it("refuses a __proto__ key anywhere in a body", async () => {
      await refused(
        trace("proto", `,"metadata":{"__proto__":{"polluted":1}}`),
        "traces.0.metadata.__proto__",
        /__proto__/,
      );
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    it("caps feedback at 20,000 items a request", async () => {
      const items = Array.from({ length: 20_001 }, (_, i) => ({ id: `f${i}`, traceId: "seed", score: 1 }));
      const res = await post("/v1/feedback", items);
      assert.equal(res.status, 400);
      assert.match(res.body.error.message, /20001 feedback items exceed the limit of 20000/);
      assert.equal(await count("feedback"), 0);
    });

    it("writes nothing of a feedback batch that names an unknown trace", async () => {
      const res = await post("/v1/feedback", [
        { id: "fb-ok", traceId: "seed", score: 1 },
        { id: "fb-bad", traceId: "no-such-trace", score: 0 },
      ]);
      assert.equal(res.status, 404);
      assert.match(res.body.error.message, /no trace with id "no-such-trace"/);
      assert.equal(await count("feedback"), 0);
    });

    it("keeps the good spans of an OTLP export and reports each bad one as partial success", async () => {
      const before = await count("steps");
      const res = await post(
        "/v1/otlp/v1/traces",
        otlpExport([
          null,
          span(1, { attributes: {} }),
          span(2, { startTimeUnixNano: "yesterday" }),
          span(3, { attributes: [{ key: "x", value: { arrayValue: { values: 7 } } }] }),
          span(4, {
            attributes: [
              { key: "gen_ai.operation.name", value: { stringValue: "chat" } },
              {
                key: "gen_ai.input.messages",
                value: { stringValue: `${"[".repeat(100)}${"]".repeat(100)}` },
              },
            ],
          }),
          span(5),
          span(6, { name: "lone \ud800 surrogate" }),
        ]),
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.partialSuccess.rejectedSpans, 5);
      const message = res.body.partialSuccess.errorMessage as string;
      assert.match(message, /span: expected an object, got null/);
      assert.match(message, /attributes: expected an array/);
      assert.match(message, /startTimeUnixNano: expected nanoseconds/);
      assert.match(message, /arrayValue\.values: expected an array/);
      assert.match(message, /gen_ai\.input\.messages.*nested deeper than 64/);
      assert.equal(await count("steps"), before + 2);
      const names = await db.query<{ name: string }>("select name from steps where name like 'lone%'");
      assert.deepEqual(names, [{ name: "lone \ufffd surrogate" }]);
    });

    it("keeps a user id longer than a trace holds (valid OTLP) as a stable digest", async () => {
      const longId = "u".repeat(300);
      const withUser = (n: number) =>
        span(n, { attributes: [{ key: "user.id", value: { stringValue: longId } }] });
      const res = await post("/v1/otlp/v1/traces", otlpExport([withUser(7), withUser(8)]));
      assert.deepEqual(res.body, { partialSuccess: {} });
      const users = await db.query<{ user_id: string }>(
        "select distinct user_id from traces where id in ($1, $2)",
        ["a".repeat(31) + "7", "a".repeat(31) + "8"],
      );
      assert.equal(users.length, 1);
      assert.match(users[0].user_id, /^sha256:[0-9a-f]{64}$/);
    });

    it("refuses an export of more than 10,000 spans with a 413 naming the limit", async () => {
      const spans = Array.from({ length: 10_001 }, (_, i) => span(i));
      const res = await post("/v1/otlp/v1/traces", otlpExport(spans));
      assert.equal(res.status, 413);
      assert.match(res.body.error.message, /10001 spans, more than the limit of 10000/);
    });
  });
}
