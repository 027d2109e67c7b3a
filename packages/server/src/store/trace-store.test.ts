import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Trace, type TraceInput } from "@arc/core";
import type { Database } from "./database.ts";
import { migrate } from "./migrate.ts";
import { createTenant } from "./tenants.ts";
import { databasesUnderTest } from "./test-databases.ts";
import { getTrace, insertFeedback, insertTraces, listTraces } from "./trace-store.ts";

const parse = (input: TraceInput) => Trace.parse(input);

function llmTrace(id: string, startedAt: string, overrides: Partial<TraceInput> = {}): Trace {
  return parse({
    id,
    name: "book-flight",
    startedAt,
    endedAt: startedAt,
    userId: "u-1",
    env: "toolcall",
    status: "ok",
    tags: ["prod"],
    steps: [
      {
        id: `${id}-s1`,
        kind: "llm",
        startedAt,
        latencyMs: 12.5,
        llm: {
          modelRequested: "arc-small",
          modelServed: "arc-small@v3",
          modelVersion: "mv_3",
          messages: [
            { role: "system", content: "You book flights." },
            {
              role: "user",
              content: [
                { type: "text", text: "Fly me to Lisbon" },
                { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
              ],
            },
          ],
          tools: [{ type: "function", function: { name: "book", parameters: { type: "object" } } }],
          params: { temperature: 0.2, max_tokens: 64 },
          output: {
            content: null,
            toolCalls: [
              { id: "call_1", type: "function", function: { name: "book", arguments: '{"to":"LIS"}' } },
            ],
          },
          finishReason: "tool_calls",
          usage: { promptTokens: 20, completionTokens: 7, totalTokens: 27 },
        },
      },
      { id: `${id}-s2`, kind: "tool", name: "book", startedAt, input: { to: "LIS" }, output: { ok: true } },
    ],
    ...overrides,
  });
}

for (const target of databasesUnderTest()) {
  describe(`trace store on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let tenant: string;
    let otherTenant: string;

    before(async () => {
      db = await target.open();
      tenant = (await createTenant(db, "acme")).id;
      otherTenant = (await createTenant(db, "globex")).id;
    });
    after(() => db?.close());

    it("stores an LLM step field by field and gives it back as sent", async () => {
      const trace = llmTrace("t-field", "2026-01-01T00:00:00.000Z");
      await insertTraces(db, tenant, [trace]);
      const stored = await getTrace(db, tenant, "t-field");
      assert.deepEqual(stored.steps[0], trace.steps[0]);
      assert.deepEqual(stored.steps[1], trace.steps[1]);
      assert.equal(stored.userId, "u-1");
      assert.deepEqual(stored.tags, ["prod"]);
      assert.deepEqual(stored.feedback, []);
    });

    it("never duplicates a trace or step that is sent again", async () => {
      const trace = llmTrace("t-again", "2026-01-01T00:01:00.000Z");
      const first = await insertTraces(db, tenant, [trace]);
      const second = await insertTraces(db, tenant, [trace]);
      assert.deepEqual(first, { traces: 1, steps: 2 });
      assert.deepEqual(second, { traces: 0, steps: 0 });
      const rows = await db.query(
        "select count(*)::int as n from steps where tenant_id = $1 and trace_id = 't-again'",
        [tenant],
      );
      assert.equal(rows[0].n, 2);
    });

    it("merges a trace whose steps arrive in separate batches", async () => {
      const whole = llmTrace("t-split", "2026-01-01T00:02:00.000Z");
      await insertTraces(db, tenant, [{ ...whole, steps: [whole.steps[0]], tags: ["a"] }]);
      await insertTraces(db, tenant, [{ ...whole, steps: [whole.steps[1]], tags: ["b"] }]);
      const stored = await getTrace(db, tenant, "t-split");
      assert.deepEqual(
        stored.steps.map((s) => s.id),
        ["t-split-s1", "t-split-s2"],
      );
      assert.deepEqual(stored.tags, ["a", "b"]);
    });

    it("stores identical message bodies once", async () => {
      await insertTraces(db, tenant, [
        llmTrace("t-blob-1", "2026-01-01T00:03:00.000Z"),
        llmTrace("t-blob-2", "2026-01-01T00:03:01.000Z"),
      ]);
      const rows = await db.query<{ n: number }>(
        "select count(distinct messages_hash)::int as n from steps where tenant_id = $1 and trace_id like 't-blob-%'",
        [tenant],
      );
      assert.equal(rows[0].n, 1);
    });

    it("rejects a batch that names the same trace twice and stores none of it", async () => {
      const trace = llmTrace("t-dup", "2026-01-01T00:04:00.000Z");
      await assert.rejects(
        insertTraces(db, tenant, [llmTrace("t-dup-other", "2026-01-01T00:04:00.000Z"), trace, trace]),
        {
          message: /traces.2.id: trace id "t-dup" appears twice/,
        },
      );
      await assert.rejects(getTrace(db, tenant, "t-dup-other"), { name: "NotFoundError" });
    });

    it("keeps each tenant's traces out of every other tenant's reach", async () => {
      await insertTraces(db, otherTenant, [llmTrace("t-secret", "2026-01-01T00:05:00.000Z")]);
      await assert.rejects(getTrace(db, tenant, "t-secret"), { name: "NotFoundError" });
      const page = await listTraces(db, tenant, { limit: 500 });
      assert.ok(page.data.every((t) => t.id !== "t-secret"));
      await assert.rejects(insertFeedback(db, tenant, { id: "f-x", traceId: "t-secret", score: 0 }), {
        name: "NotFoundError",
      });
    });

    it("lists newest first and pages with a cursor through every trace exactly once", async () => {
      const batch = Array.from({ length: 7 }, (_, i) =>
        llmTrace(`t-page-${i}`, `2026-02-01T00:00:0${i}.000Z`, { tags: ["paging"] }),
      );
      await insertTraces(db, tenant, batch);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await listTraces(db, tenant, { from: "2026-02-01T00:00:00Z", limit: 3, cursor });
        seen.push(...page.data.map((t) => t.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      assert.deepEqual(seen, batch.map((t) => t.id).reverse());
    });

    it("filters by time, model, status and text", async () => {
      await insertTraces(db, tenant, [
        llmTrace("t-filter-err", "2026-03-01T00:00:00.000Z", { status: "error", name: "refund order 991" }),
      ]);
      const byStatus = await listTraces(db, tenant, { status: "error" });
      assert.deepEqual(
        byStatus.data.map((t) => t.id),
        ["t-filter-err"],
      );
      const byText = await listTraces(db, tenant, { text: "ORDER 991" });
      assert.deepEqual(
        byText.data.map((t) => t.id),
        ["t-filter-err"],
      );
      const byModel = await listTraces(db, tenant, { model: "arc-small@v3", from: "2026-03-01T00:00:00Z" });
      assert.deepEqual(
        byModel.data.map((t) => t.id),
        ["t-filter-err"],
      );
      const none = await listTraces(db, tenant, { model: "gpt-unknown" });
      assert.equal(none.data.length, 0);
      const before = await listTraces(db, tenant, { to: "2026-01-01T00:00:30Z" });
      assert.deepEqual(
        before.data.map((t) => t.id),
        ["t-field"],
      );
    });

    it("attaches feedback to a trace and to one of its steps, once per feedback id", async () => {
      await insertTraces(db, tenant, [llmTrace("t-fb", "2026-04-01T00:00:00.000Z")]);
      assert.deepEqual(
        await insertFeedback(db, tenant, { id: "f-1", traceId: "t-fb", score: -1, label: "wrong_tool" }),
        {
          created: true,
        },
      );
      assert.deepEqual(await insertFeedback(db, tenant, { id: "f-1", traceId: "t-fb", score: -1 }), {
        created: false,
      });
      await insertFeedback(db, tenant, {
        id: "f-2",
        traceId: "t-fb",
        stepId: "t-fb-s1",
        correction: '{"to":"OPO"}',
      });
      await assert.rejects(
        insertFeedback(db, tenant, { id: "f-3", traceId: "t-fb", stepId: "nope", score: 1 }),
        {
          message: /no step "nope"/,
        },
      );
      const stored = await getTrace(db, tenant, "t-fb");
      assert.deepEqual(
        stored.feedback.map((f) => [f.id, f.label ?? f.correction]),
        [
          ["f-1", "wrong_tool"],
          ["f-2", '{"to":"OPO"}'],
        ],
      );
    });

    it("runs migrations once however often it is asked", async () => {
      assert.deepEqual(await migrate(db), []);
    });
  });
}
