import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { formatToolCall, renderTemplate, teachingTemplates } from "@arc/core";
import { waitUntil } from "@arc/core/testing";
import OpenAI from "openai";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import { ModelPool } from "../gateway/model-pool.ts";
import { type ReleaseTestServer, startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import { listAudit } from "../store/audit-log.ts";
import type { Database } from "../store/database.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { getTrace, listTraces } from "../store/trace-store.ts";

const templates = teachingTemplates();
const RIGHT = formatToolCall({ tool: "book_table", args: { place: "Nobu", date: "2026-05-01", people: 2 } });
const HINT = "Call the tool book_table with the arguments place, date, people, taken from the request.";

/** The answer books of a student that needs a hint for booking and one that a teacher's hint breaks. */
function books() {
  const helped = "Book a table for 2 at Nobu on 2026-05-01.";
  const harmed = "Table for 2 at Nobu, May 1 please.";
  // the teacher names a month besides the request's, and that wrong month would break this student
  const monthInWords = "Book a table for 2 at Nobu on May 1.";
  const falseMonth = `${HINT} July is month 07; May is month 05.`;
  const trueMonth = `${HINT} May is month 05.`;
  const probe = (q: string) => renderTemplate(templates.probe, { question: q });
  const teacherPrompt = (q: string, approach: string) =>
    renderTemplate(templates.teacherAdaptive, { question: q, approach });
  const guided = (q: string, teaching = HINT) =>
    renderTemplate(templates.studentWithGuidance, { question: q, teaching });
  const baseline = (q: string) => renderTemplate(templates.baseline, { question: q });
  const wrongStart = '{"tool":"add_event"';
  const student = new AnswerBookEngine(
    new Map([
      [helped, formatToolCall({ tool: "add_event", args: { title: "Nobu" } })],
      [harmed, RIGHT],
      [probe(helped), wrongStart],
      [guided(helped), RIGHT],
      [baseline(helped), formatToolCall({ tool: "add_event", args: { title: "Nobu" } })],
      [probe(harmed), wrongStart],
      [guided(harmed), "I cannot book that."],
      [baseline(harmed), RIGHT],
      [probe(monthInWords), wrongStart],
      [guided(monthInWords, trueMonth), RIGHT],
      [guided(monthInWords, falseMonth), "I cannot book that."],
      [baseline(monthInWords), formatToolCall({ tool: "add_event", args: { title: "Nobu" } })],
    ]),
  );
  const reply = (teaching: string) =>
    `<thinking>The request needs book_table. Diagnosis: weak</thinking><teaching>${teaching}</teaching>`;
  const teacher = new AnswerBookEngine(
    new Map([
      [teacherPrompt(helped, wrongStart), reply(HINT)],
      [teacherPrompt(harmed, wrongStart), reply(HINT)],
      [teacherPrompt(monthInWords, wrongStart), reply(falseMonth)],
    ]),
  );
  return { student, teacher, helped, harmed, monthInWords };
}

for (const dbUnderTest of databasesUnderTest()) {
  describe(`run-time teaching at the gateway (${dbUnderTest.name})`, { skip: dbUnderTest.skip }, () => {
    let db: Database;
    let server: ReleaseTestServer;
    let client: OpenAI;
    const b = books();

    before(async () => {
      db = await dbUnderTest.open();
      const engines: Record<string, AnswerBookEngine> = { "/student": b.student, "/teacher": b.teacher };
      server = await startReleaseTestServer(db, {
        pool: new ModelPool({ loadEngine: async (dir) => engines[dir] }),
      });
      await registerModelVersion(db, server.tenantId, {
        name: "student",
        status: "promoted",
        artifactDir: "/student",
        actor: "test",
      });
      await registerModelVersion(db, server.tenantId, {
        name: "teacher",
        artifactDir: "/teacher",
        actor: "test",
      });
      client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: server.key, maxRetries: 0 });
    });

    after(async () => {
      await server.close();
      await db.close();
    });

    const put = (config: unknown) =>
      fetch(`${server.url}/v1/teaching`, {
        method: "PUT",
        headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
        body: JSON.stringify(config),
      });
    const status = async () =>
      (await (
        await fetch(`${server.url}/v1/teaching`, { headers: { authorization: `Bearer ${server.key}` } })
      ).json()) as {
        config: { mode: string } | null;
        patterns: { patternId: string; teaching: boolean; switchedOff?: { decision: { ndr: number } } }[];
      };

    it("rejects a teaching config naming a teacher the tenant does not have, or a bad mode", async () => {
      const missing = await put({ teacher: "nobody" });
      assert.equal(missing.status, 404);
      const bad = await put({ teacher: "teacher", mode: "sometimes" });
      assert.equal(bad.status, 400);
      assert.match(JSON.stringify(await bad.json()), /teaching\.mode/);
    });

    it("answers a request under the teacher and records probe, teaching and solution as steps of its trace", async () => {
      assert.equal((await put({ teacher: "teacher", mode: "adaptive", baselineShare: 0 })).status, 200);
      const raw = await client.chat.completions
        .create({ model: "arc", messages: [{ role: "user", content: b.helped }], temperature: 0 })
        .withResponse();
      assert.equal(raw.data.choices[0].message.content, RIGHT);
      assert.match(
        raw.response.headers.get("x-arc-teaching") ?? "",
        /mode=adaptive; judgement=weak; pattern=\*/,
      );
      await server.release.gateway.flush();
      const page = await waitUntil(async () => {
        const p = await listTraces(db, server.tenantId, { limit: 10 });
        return p.data.length > 0 ? p : undefined;
      }, "the taught trace");
      const trace = await getTrace(db, server.tenantId, page.data[0].id);
      assert.deepEqual(
        trace.steps.map((s) => s.name),
        ["teach.probe", "teach.teaching", "teach.solution"],
      );
      assert.equal(trace.steps[1].llm?.output?.content?.includes(HINT), true);
      assert.ok(trace.steps.every((s) => (s.llm?.usage?.completionTokens ?? 0) > 0));
      assert.equal(trace.output, RIGHT);
    });

    it("honors max_tokens and logprobs on a taught answer", async () => {
      assert.equal((await put({ teacher: "teacher", mode: "adaptive", baselineShare: 0 })).status, 200);
      const raw = await client.chat.completions
        .create({
          model: "arc",
          messages: [{ role: "user", content: b.helped }],
          temperature: 0,
          max_tokens: 10,
          logprobs: true,
          top_logprobs: 2,
        })
        .withResponse();
      assert.match(raw.response.headers.get("x-arc-teaching") ?? "", /mode=adaptive/);
      const [choice] = raw.data.choices;
      assert.equal(choice.message.content, RIGHT.slice(0, 10));
      assert.equal(choice.finish_reason, "length");
      assert.equal(raw.data.usage?.completion_tokens, 10);
      assert.equal(choice.logprobs?.content?.length, 10);
      assert.ok(choice.logprobs?.content?.every((t) => t.top_logprobs.length === 2));
    });

    it("forwards streamed requests untaught", async () => {
      const stream = await client.chat.completions.create({
        model: "arc",
        messages: [{ role: "user", content: b.helped }],
        stream: true,
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      assert.equal(text, formatToolCall({ tool: "add_event", args: { title: "Nobu" } }));
    });

    it("forwards requests offering tools or asking for several choices untaught, in the model's own shape", async () => {
      assert.equal((await put({ teacher: "teacher", mode: "always", baselineShare: 0 })).status, 200);
      const withTools = await client.chat.completions
        .create({
          model: "arc",
          messages: [{ role: "user", content: b.helped }],
          tools: [{ type: "function", function: { name: "add_event", parameters: { type: "object" } } }],
        })
        .withResponse();
      assert.equal(withTools.response.headers.get("x-arc-teaching"), null);
      const [call] = withTools.data.choices[0].message.tool_calls ?? [];
      assert.ok(call && call.type === "function");
      assert.deepEqual([call.function.name, call.function.arguments], ["add_event", '{"title":"Nobu"}']);
      const several = await client.chat.completions
        .create({ model: "arc", messages: [{ role: "user", content: b.helped }], n: 2 })
        .withResponse();
      assert.equal(several.response.headers.get("x-arc-teaching"), null);
      assert.equal(several.data.choices.length, 2);
    });

    it("switches teaching off for a pattern whose live NDR falls below its gate, audit-logs it, then answers untaught", async () => {
      await put({
        teacher: "teacher",
        mode: "adaptive",
        baselineShare: 1,
        patterns: ["booking"],
        ndr: { gate: 0.99, minSamples: 3, window: 10 },
      });
      const ask = () =>
        client.chat.completions.create(
          { model: "arc", messages: [{ role: "user", content: b.harmed }] },
          { headers: { "x-arc-pattern": "booking", "x-arc-env": "toolcall" } },
        );
      for (let i = 0; i < 3; i++)
        assert.equal((await ask()).choices[0].message.content, "I cannot book that.");
      const now = await status();
      const booking = now.patterns.find((p) => p.patternId === "booking");
      assert.equal(booking?.teaching, false);
      assert.equal(booking?.switchedOff?.decision.ndr, 0);
      assert.equal((await ask()).choices[0].message.content, RIGHT);
      const audit = await listAudit(db, server.tenantId, { kind: "pattern", id: "booking" });
      assert.deepEqual(
        audit.map((a) => [a.actor, a.action, a.toState]),
        [["system:teaching-ndr-monitor", "teaching_switched_off", "off"]],
      );

      const reset = await fetch(`${server.url}/v1/teaching/patterns/booking/reset`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}` },
      });
      assert.equal(reset.status, 200);
      assert.equal((await ask()).choices[0].message.content, "I cannot book that.");
    });

    it("teaches only the listed patterns' traffic", async () => {
      await put({ teacher: "teacher", mode: "adaptive", baselineShare: 0, patterns: ["booking"] });
      const untaught = await client.chat.completions.create({
        model: "arc",
        messages: [{ role: "user", content: b.helped }],
      });
      assert.equal(
        untaught.choices[0].message.content,
        formatToolCall({ tool: "add_event", args: { title: "Nobu" } }),
      );
    });

    it("cuts a conversion the request does not support from the teaching of toolcall traffic (x-arc-env)", async () => {
      await put({ teacher: "teacher", mode: "adaptive", baselineShare: 0 });
      const ask = (headers: Record<string, string>) =>
        client.chat.completions.create(
          { model: "arc", messages: [{ role: "user", content: b.monthInWords }], temperature: 0 },
          { headers },
        );
      assert.equal((await ask({ "x-arc-env": "toolcall" })).choices[0].message.content, RIGHT);
      // without the family the protocol cannot tell the false month, and this student breaks on it
      assert.equal((await ask({})).choices[0].message.content, "I cannot book that.");
    });
  });
}
