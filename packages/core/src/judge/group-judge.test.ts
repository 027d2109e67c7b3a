import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { answerTrace } from "./answer-trace.ts";
import { MinuteWindow } from "./budget-window.ts";
import { createGroupJudge, groupJudgeMessages, groupReplySchema, parseGroupReply } from "./group-judge.ts";
import type { JudgeClient } from "./judge-client.ts";
import { createJudgeDetector } from "./judge-detector.ts";
import { JudgeReplyError } from "./judge-reply.ts";
import { parseRubric } from "./rubric.ts";

const rubric = parseRubric({
  criteria: ["Book the table the user asked for."],
  classes: [{ name: "wrong_date", description: "books another day", severity: "high" }],
});

describe("group judging", () => {
  it("shows the conversation once, then every answer numbered, and asks for an explanation before each score", () => {
    const [system, user] = groupJudgeMessages(
      rubric,
      [{ role: "user", content: "Table for 2 at Nobu on May 3." }],
      [
        '{"tool":"book_table","args":{"date":"2026-05-03"}}',
        '{"tool":"book_table","args":{"date":"2026-03-05"}}',
      ],
    );
    assert.match(system.content, /You compare 2 answers/);
    assert.match(system.content, /first explain in one short sentence .* then score it from 0/);
    assert.match(system.content, /- wrong_date: books another day/);
    assert.match(
      system.content,
      /\{"scores": \[\{"answer": 1, "explanation": "\.\.\.", "score": \.\.\.\}, \{"answer": 2, /,
    );
    assert.equal(
      user.content,
      '[user] Table for 2 at Nobu on May 3.\n[answer 1] {"tool":"book_table","args":{"date":"2026-05-03"}}\n[answer 2] {"tool":"book_table","args":{"date":"2026-03-05"}}',
    );
    const schema = groupReplySchema(2) as { properties: { scores: { items: { required: string[] } } } };
    assert.deepEqual(schema.properties.scores.items.required, ["answer", "explanation", "score"]);
  });

  it("reads an explanation and a score per answer, in the answers' order, however the reply wraps them", () => {
    const expected = { scores: [1, 0.25], explanations: ["books May 3", "books March 5"] };
    const entries = [
      { answer: 1, explanation: "books May 3", score: 1 },
      { answer: 2, explanation: "books March 5", score: 0.25 },
    ];
    const plain = JSON.stringify({ scores: entries });
    const readings: [string, string][] = [
      [plain, "as asked"],
      [`Here is my verdict:\n\`\`\`json\n${plain}\n\`\`\`\nThanks.`, "in a code fence among prose"],
      [`My scores: ${plain} (done)`, "among prose"],
      [JSON.stringify({ scores: [entries[1], entries[0]] }), "out of order, each naming its answer"],
      [
        JSON.stringify({
          scores: [
            { trajectory_id: "answer 1", explanation: "books May 3", score: "1" },
            { trajectory_id: "answer 2", explanation: "books March 5", score: "0.25", extra: true },
          ],
          summary: "fields beside the asked ones are ignored",
        }),
        "RULER's own field names, numbers as strings",
      ],
    ];
    for (const [text, how] of readings) assert.deepEqual(parseGroupReply(text, 2), expected, how);
    assert.deepEqual(parseGroupReply('{"scores":[1,0.25]}', 2), {
      scores: [1, 0.25],
      explanations: ["", ""],
    });
  });

  it("names a missing, doubled or out-of-range score rather than guess one", () => {
    const wrong: [string, RegExp][] = [
      ["scores: 1, 0", /not JSON/],
      ['{"scores":[1]}', /scores: expected 2 entries, one per answer, got \[1\]/],
      ['{"scores":[1,1.5]}', /scores\[1\]\.score: expected a number from 0 to 1, got 1\.5/],
      [
        '{"scores":[{"answer":1,"explanation":"x"},{"answer":2,"score":1}]}',
        /scores\[0\]\.score: expected a number/,
      ],
      ['{"scores":[{"answer":1,"score":1},{"answer":1,"score":0}]}', /answer 1 is scored twice/],
      ['{"scores":[{"answer":1,"score":1},{"answer":3,"score":0}]}', /answer 3 is not one of 1 to 2/],
      ['{"scores":[{"answer":1,"score":"high"},{"answer":2,"score":0}]}', /got "high"/],
    ];
    for (const [text, message] of wrong)
      assert.throws(
        () => parseGroupReply(text, 2),
        (e: Error) => e instanceof JudgeReplyError && message.test(e.message),
        text,
      );
  });

  it("spends the window it shares with the tenant's detector: one call a minute is one call for both", async () => {
    // a test double writes the replies: what is checked is the budget, not a judge's verdict
    let calls = 0;
    const client: JudgeClient = {
      complete: async (request) => {
        calls++;
        const grouped = JSON.stringify(request.responseFormat).includes("group_scores");
        const verdict = { failed: false, class: "none", severity: "none", evidence: "ok", confidence: 0.9 };
        return { content: JSON.stringify(grouped ? { scores: [1, 0] } : verdict), tokens: 10 };
      },
    };
    const window = new MinuteWindow({ callsPerMinute: 1, tokensPerMinute: 1_000 }, () => 0);
    const detector = createJudgeDetector({ rubric, client, model: "judge", window });
    const group = createGroupJudge({ rubric, client, model: "judge", window });
    const trace = answerTrace([{ role: "user", content: "Table for 2." }], undefined, "booked");
    assert.equal((await detector.judge(trace)).status, "passed");
    const scored = await group.score([{ role: "user", content: "Table for 2." }], ["a", "b"]);
    assert.deepEqual(scored, { unscored: "not judged yet: 1 judge calls in the last minute (budget 1)" });
    assert.equal(calls, 1);
  });
});
