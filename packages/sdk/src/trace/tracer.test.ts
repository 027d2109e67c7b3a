import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import OpenAI from "openai";
import { type Arc, createArc } from "../arc/create-arc.ts";
import { CollectorTestServer } from "../test-doubles/collector-test-server.ts";
import { OpenAITestServer } from "../test-doubles/openai-test-server.ts";
import type { WireTrace } from "../wire/wire-types.ts";

let provider: OpenAITestServer;
let collector: CollectorTestServer;
let arc: Arc;
let client: OpenAI;

before(async () => {
  provider = await OpenAITestServer.start();
  collector = await CollectorTestServer.start();
  arc = createArc({
    baseUrl: collector.url,
    apiKey: "k",
    flushIntervalMs: 10,
    lateStepTimeoutMs: 300,
    onWarning: () => {},
  });
  client = arc.wrapOpenAI(new OpenAI({ baseURL: provider.url, apiKey: "k", maxRetries: 0 }));
});

after(async () => {
  await arc.shutdown();
  await Promise.all([provider.close(), collector.close()]);
});

beforeEach(async () => {
  await arc.flush();
  collector.requests.length = 0;
  provider.reply = (body) => ({
    content: `re: ${JSON.stringify((body.messages as { content: string }[]).at(-1)?.content)}`,
  });
});

async function sentTraces(): Promise<WireTrace[]> {
  assert.equal(await arc.flush(), true);
  return collector.traces();
}

const ask = (text: string) =>
  client.chat.completions.create({ model: "m", messages: [{ role: "user", content: text }] });

describe("arc.trace", () => {
  it("groups the calls made inside it into one trace with its user, session, env, tags, metadata, input and output", async () => {
    const result = await arc.trace(
      "answer-ticket",
      async (t) => {
        const first = await ask("one");
        await new Promise((resolve) => setTimeout(resolve, 5));
        const second = await ask("two");
        return { answer: second.choices[0]!.message.content, firstId: first.id, traceId: t.traceId };
      },
      {
        userId: "user-7",
        sessionId: "session-3",
        env: "toolcall",
        tags: ["beta", "eu"],
        metadata: { ticket: 42 },
        input: { question: "two?" },
      },
    );
    const traces = await sentTraces();
    assert.equal(traces.length, 1);
    const trace = traces[0]!;
    assert.equal(trace.id, result.traceId);
    assert.equal(trace.name, "answer-ticket");
    assert.equal(trace.status, "ok");
    assert.equal(trace.userId, "user-7");
    assert.equal(trace.sessionId, "session-3");
    assert.equal(trace.env, "toolcall");
    assert.deepEqual(trace.tags, ["beta", "eu"]);
    assert.deepEqual(trace.metadata, { ticket: 42 });
    assert.deepEqual(trace.input, { question: "two?" });
    assert.deepEqual(trace.output, result);
    assert.ok(trace.startedAt <= trace.steps[0]!.startedAt && trace.steps[1]!.endedAt! <= trace.endedAt!);
    assert.deepEqual(
      trace.steps.map((s) => s.llm!.output!.content),
      ['re: "one"', 're: "two"'],
    );
    assert.ok(trace.steps.every((s) => s.parentId === undefined));
  });

  it("keeps concurrent traces apart", async () => {
    await Promise.all(
      ["a", "b", "c"].map((name) => arc.trace(name, async () => Promise.all([ask(name), ask(name)]))),
    );
    const traces = await sentTraces();
    assert.equal(traces.length, 3);
    for (const trace of traces) {
      assert.deepEqual(
        trace.steps.map((s) => s.llm!.output!.content),
        [`re: "${trace.name}"`, `re: "${trace.name}"`],
      );
    }
  });

  it("records a nested trace as a step that the calls inside it point to", async () => {
    await arc.trace("episode", async () => {
      await ask("plan");
      await arc.trace("lookup", async () => ask("search"), { kind: "tool", input: { q: "search" } });
    });
    const [trace] = await sentTraces();
    assert.equal(trace!.steps.length, 3);
    const lookup = trace!.steps.find((s) => s.name === "lookup")!;
    const search = trace!.steps.find((s) => s.llm?.messages[0]?.content === "search")!;
    const plan = trace!.steps.find((s) => s.llm?.messages[0]?.content === "plan")!;
    assert.equal(lookup.kind, "tool");
    assert.deepEqual(lookup.input, { q: "search" });
    assert.equal((lookup.output as { id: string }).id, search.metadata!.responseId);
    assert.equal(search.parentId, lookup.id);
    assert.equal(plan.parentId, undefined);
    assert.equal(lookup.parentId, undefined);
    assert.ok(typeof lookup.latencyMs === "number");
  });

  it("records a thrown error as status error and re-throws the very same error", async () => {
    const thrown = new RangeError("tool exploded");
    const caught = await arc
      .trace("failing", async () => {
        await ask("before");
        throw thrown;
      })
      .catch((e: unknown) => e);
    assert.equal(caught, thrown);
    const [trace] = await sentTraces();
    assert.equal(trace!.status, "error");
    assert.deepEqual(trace!.metadata!.error, { message: "tool exploded", type: "RangeError" });
    assert.equal(trace!.steps.length, 1);
    assert.equal(trace!.output, undefined);
  });

  it("returns a synchronous function's value synchronously", async () => {
    const value = arc.trace("sync", () => 41 + 1);
    assert.equal(value, 42);
    assert.throws(
      () =>
        arc.trace("sync-throw", () => {
          throw new Error("sync boom");
        }),
      /sync boom/,
    );
    const traces = await sentTraces();
    assert.deepEqual(
      traces.map((t) => [t.name, t.status, t.output]),
      [
        ["sync", "ok", 42],
        ["sync-throw", "error", undefined],
      ],
    );
  });

  it("sends each call made outside any trace as a trace of its own", async () => {
    await ask("alone-1");
    await ask("alone-2");
    const traces = await sentTraces();
    assert.equal(traces.length, 2);
    assert.notEqual(traces[0]!.id, traces[1]!.id);
    assert.ok(traces.every((t) => t.steps.length === 1 && t.status === "ok"));
  });

  it("waits for a stream read after the function returned, and includes it", async () => {
    const stream = await arc.trace("streams-later", async () =>
      client.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "s" }],
        stream: true,
      }),
    );
    assert.equal(await arc.flush(), true);
    assert.equal(collector.traces().length, 0, "a flush does not send a trace whose step is still running");
    for await (const _ of stream);
    const [trace] = await sentTraces();
    assert.equal(trace!.steps.length, 1);
    assert.equal(trace!.steps[0]!.llm!.output!.content, 're: "s"');
  });

  it("sends a trace without a step still running after lateStepTimeoutMs, and the step later under the same id", async () => {
    const stream = await arc.trace("abandons", async () =>
      client.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: "late" }],
        stream: true,
      }),
    );
    await collector.waitFor(() => collector.traces().length === 1, 2000);
    const [first] = collector.traces();
    assert.equal(first!.steps.length, 0);
    assert.equal(first!.metadata!.stepsStillRunning, 1);
    for await (const _ of stream);
    const traces = await sentTraces();
    assert.equal(traces.length, 2);
    assert.equal(traces[1]!.id, first!.id);
    assert.equal(traces[1]!.steps[0]!.llm!.output!.content, 're: "late"');
  });

  it("lets the function set output, metadata and user late, and exposes the current trace id", async () => {
    let inside: string | undefined;
    await arc.trace("updates", async (t) => {
      inside = arc.currentTraceId();
      t.update({ output: "explicit", userId: "u-late", metadata: { step: 2 }, tags: ["x"] });
      return "ignored";
    });
    assert.equal(arc.currentTraceId(), undefined);
    const [trace] = await sentTraces();
    assert.equal(trace!.id, inside);
    assert.equal(trace!.output, "explicit");
    assert.equal(trace!.userId, "u-late");
    assert.deepEqual(trace!.metadata, { step: 2 });
    assert.deepEqual(trace!.tags, ["x"]);
  });

  it("does not record the return value when captureOutput is false, and cuts over-long fields", async () => {
    await arc.trace("n".repeat(600), async () => "secret", {
      captureOutput: false,
      userId: "u".repeat(300),
      tags: Array.from({ length: 70 }, (_, i) => `t${i}`),
    });
    const [trace] = await sentTraces();
    assert.equal(trace!.output, undefined);
    assert.equal(trace!.name!.length, 512);
    assert.equal(trace!.userId!.length, 256);
    assert.equal(trace!.tags!.length, 64);
  });

  it("still sends a trace whose output cannot be turned into JSON as is", async () => {
    const cyclic: Record<string, unknown> = { n: 1n };
    cyclic.self = cyclic;
    await arc.trace("cyclic", async () => cyclic);
    const [trace] = await sentTraces();
    assert.deepEqual(trace!.output, { n: "1", self: "[Circular]" });
  });
});

describe("arc.feedback", () => {
  it("posts a judgement of a trace to /v1/feedback", async () => {
    const traceId = await arc.trace("judged", async (t) => t.traceId);
    const id = arc.feedback({
      traceId,
      score: 0,
      label: "wrong_tool",
      correction: "call get_weather",
      comment: "meh",
    });
    assert.equal(await arc.flush(), true);
    const [feedback] = collector.feedback();
    assert.deepEqual(feedback, {
      id,
      traceId,
      score: 0,
      label: "wrong_tool",
      correction: "call get_weather",
      comment: "meh",
      createdAt: feedback!.createdAt,
    });
    assert.ok(!Number.isNaN(Date.parse(feedback!.createdAt!)));
  });

  it("rejects feedback the server would refuse, naming the field", () => {
    assert.throws(() => arc.feedback({ traceId: "t1" }), {
      name: "ArcInputError",
      message: /needs at least one of score, label or correction/,
    });
    assert.throws(() => arc.feedback({ traceId: "has space", score: 1 }), { field: "feedback.traceId" });
    assert.throws(() => arc.feedback({ traceId: "t1", score: Number.NaN }), {
      message: "feedback.score: expected a finite number, got NaN",
    });
    assert.throws(() => arc.feedback({ traceId: "t1", label: "x".repeat(300) }), { field: "feedback.label" });
  });
});
