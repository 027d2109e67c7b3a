import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "../errors/arc-error.ts";
import type { Trace } from "../trace/index.ts";
import type { JudgeClient } from "./judge-client.ts";
import { createJudgeDetector } from "./judge-detector.ts";
import { judgedTranscript } from "./judge-prompt.ts";
import { JudgeReplyError, judgeReplySchema, parseJudgeReply } from "./judge-reply.ts";
import { parseRubric } from "./rubric.ts";

const rubric = parseRubric(
  {
    criteria: ["Quote the order id the user gave.", "Never promise a refund."],
    classes: [
      { name: "wrong_order_id", description: "names an order the user did not give", severity: "high" },
      { name: "refund_promise", description: "promises a refund", severity: "medium" },
    ],
    instructions: "The agent answers a shop's customers.",
  },
  3,
);

/** A support trace: the user gives order 1234; `answer` is the agent's reply. */
function trace(id: string, answer: string): Trace {
  return {
    id,
    tenantId: "acme",
    startedAt: "2026-11-27T10:00:00.000Z",
    steps: [
      {
        id: "s1",
        kind: "llm",
        startedAt: "2026-11-27T10:00:00.000Z",
        llm: {
          messages: [
            { role: "system", content: "You answer customers." },
            { role: "user", content: "Where is my order 1234?" },
          ],
          output: { content: answer },
        },
      },
    ],
  } as unknown as Trace;
}

const reply = (fields: Record<string, unknown>) =>
  JSON.stringify({
    failed: true,
    class: "wrong_order_id",
    severity: "high",
    evidence: "order 4321",
    confidence: 0.9,
    ...fields,
  });

/** TEST DOUBLE of a judge endpoint: answers from a script, counts its calls (no judge model runs in a unit test). */
function scripted(
  answer: () => Promise<{ content: string; tokens?: number }>,
): JudgeClient & { calls: number } {
  const client = {
    calls: 0,
    complete: async () => {
      client.calls++;
      return answer();
    },
  };
  return client;
}

describe("rubrics", () => {
  it("reads criteria, classes and instructions, with the version given", () => {
    assert.equal(rubric.version, 3);
    assert.deepEqual(
      rubric.classes.map((c) => [c.name, c.severity]),
      [
        ["wrong_order_id", "high"],
        ["refund_promise", "medium"],
      ],
    );
  });

  for (const [input, field] of [
    [{ classes: [{ name: "x", description: "d", severity: "low" }] }, "criteria"],
    [
      { criteria: ["c"], classes: [{ name: "Bad Name", description: "d", severity: "low" }] },
      "classes[0].name",
    ],
    [
      { criteria: ["c"], classes: [{ name: "x", description: "d", severity: "urgent" }] },
      "classes[0].severity",
    ],
    [
      {
        criteria: ["c"],
        classes: [
          { name: "x", description: "d", severity: "low" },
          { name: "x", description: "e", severity: "low" },
        ],
      },
      "classes[1].name",
    ],
    [
      { criteria: ["c"], classes: [{ name: "x", description: "d", severity: "low" }], colour: "red" },
      "colour",
    ],
  ] as const) {
    it(`refuses a rubric with a bad ${field}, naming it`, () => {
      assert.throws(
        () => parseRubric(input),
        (error: unknown) => error instanceof InvalidInputError && error.field === field,
      );
    });
  }
});

describe("the judge's reply", () => {
  it("is asked for with a schema whose classes are the rubric's and none", () => {
    const schema = judgeReplySchema(rubric) as {
      properties: { class: { enum: string[] }; confidence: { enum: number[] } };
      required: string[];
    };
    assert.deepEqual(schema.properties.class.enum, ["wrong_order_id", "refund_promise", "none"]);
    assert.deepEqual(schema.required, ["failed", "class", "severity", "evidence", "confidence"]);
    // a confidence in tenths, written as JSON writes them: the decoding grammar holds it in [0, 1]
    assert.deepEqual(
      schema.properties.confidence.enum.map((c) => JSON.stringify(c)),
      ["0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1"],
    );
    for (const confidence of schema.properties.confidence.enum)
      assert.equal(parseJudgeReply(reply({ confidence }), rubric).confidence, confidence);
  });

  it("is read when it is exactly that object", () => {
    assert.deepEqual(parseJudgeReply(reply({}), rubric), {
      failed: true,
      class: "wrong_order_id",
      severity: "high",
      evidence: "order 4321",
      confidence: 0.9,
    });
  });

  for (const [text, says] of [
    ["The answer is wrong.", "not JSON"],
    [reply({ class: "rude" }), "class: expected one of wrong_order_id, refund_promise, none"],
    [reply({ class: "none" }), "a failed trace needs a rubric class"],
    [reply({ confidence: 1.5 }), "confidence: expected a number in [0, 1]"],
    [reply({ extra: 1 }), "unknown fields extra"],
    [JSON.stringify({ failed: false }), "lacks class, severity, evidence, confidence"],
  ] as const) {
    it(`is refused, saying what is wrong, when ${says}`, () => {
      assert.throws(
        () => parseJudgeReply(text, rubric),
        (error: unknown) => error instanceof JudgeReplyError && error.message.includes(says),
      );
    });
  }
});

describe("the judge detector", () => {
  it("shows the judge the conversation and marks the answer under judgement", () => {
    const text = judgedTranscript(trace("t", "Order 4321 ships today."));
    assert.match(text, /\[user\] Where is my order 1234\?/);
    assert.match(text, /\[assistant — the answer to judge\] Order 4321 ships today\./);
  });

  it("turns a failing reply into a rubric_violation with the rubric's class as path, and caches it", async () => {
    const client = scripted(async () => ({ content: reply({}), tokens: 120 }));
    const judge = createJudgeDetector({ rubric, client, model: "judge-1" });
    const context = {} as Parameters<typeof judge.detect>[1];
    const [verdict] = await judge.detect(trace("t1", "Order 4321 ships today."), context);
    assert.equal(verdict.status, "failed");
    assert.equal(verdict.class, "rubric_violation");
    assert.equal(verdict.path, "wrong_order_id");
    assert.equal(verdict.severity, "high");
    assert.equal(verdict.evidence.snippet, "order 4321");
    assert.ok(Math.abs(verdict.score - 0.1) < 1e-12);
    await judge.detect(trace("t1", "Order 4321 ships today."), context);
    assert.equal(client.calls, 1, "the same trace, rubric version and judge model are judged once");
  });

  it("passes a trace the judge passes", async () => {
    const client = scripted(async () => ({
      content: reply({
        failed: false,
        class: "none",
        severity: "none",
        evidence: "order 1234",
        confidence: 0.8,
      }),
    }));
    const [verdict] = await createJudgeDetector({ rubric, client, model: "judge-1" }).detect(
      trace("t2", "Order 1234 ships today."),
      {} as never,
    );
    assert.equal(verdict.status, "passed");
    assert.equal(verdict.score, 0.8);
  });

  for (const [what, answer, says] of [
    ["a malformed reply", async () => ({ content: "yes it failed" }), "not JSON"],
    [
      "an outage",
      async () => Promise.reject(new Error("the judge endpoint answered HTTP 503: down")),
      "HTTP 503",
    ],
    ["a time-out", async () => Promise.reject(new Error("no answer within 20000 ms")), "no answer within"],
  ] as const) {
    it(`keeps the trace as unknown, with the reason, after ${what}, and judges it again later`, async () => {
      let attempt = 0;
      const client = scripted(async () => (attempt++ === 0 ? answer() : { content: reply({}) }));
      const judge = createJudgeDetector({ rubric, client, model: "judge-1" });
      const [first] = await judge.detect(trace("t3", "Order 4321."), {} as never);
      assert.equal(first.status, "unknown");
      assert.ok(first.evidence.message.includes(says), first.evidence.message);
      const [second] = await judge.detect(trace("t3", "Order 4321."), {} as never);
      assert.equal(second.status, "failed");
    });
  }

  it("holds traces back as unknown once the minute's budget is spent, and judges them when it frees", async () => {
    let now = 0;
    const client = scripted(async () => ({ content: reply({}), tokens: 100 }));
    const judge = createJudgeDetector({
      rubric,
      client,
      model: "judge-1",
      budget: { callsPerMinute: 2, tokensPerMinute: 1_000 },
      now: () => now,
    });
    const statuses = [];
    for (const id of ["a", "b", "c"])
      statuses.push((await judge.detect(trace(id, "x"), {} as never))[0].status);
    assert.deepEqual(statuses, ["failed", "failed", "unknown"]);
    assert.equal(client.calls, 2);
    now = 61_000;
    assert.equal((await judge.detect(trace("c", "x"), {} as never))[0].status, "failed");
  });
});
