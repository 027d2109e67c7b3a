import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { answerTrace } from "./answer-trace.ts";
import { MinuteWindow } from "./budget-window.ts";
import { createGroupJudge, groupJudgeMessages, parseGroupReply } from "./group-judge.ts";
import type { JudgeClient } from "./judge-client.ts";
import { createJudgeDetector } from "./judge-detector.ts";
import { JudgeReplyError } from "./judge-reply.ts";
import { parseRubric } from "./rubric.ts";

const rubric = parseRubric({
  criteria: ["Book the table the user asked for."],
  classes: [{ name: "wrong_date", description: "books another day", severity: "high" }],
});

describe("group judging", () => {
  it("shows the conversation once, then every answer numbered, with the rubric and the reply's shape", () => {
    const [system, user] = groupJudgeMessages(
      rubric,
      [{ role: "user", content: "Table for 2 at Nobu on May 3." }],
      [
        '{"tool":"book_table","args":{"date":"2026-05-03"}}',
        '{"tool":"book_table","args":{"date":"2026-03-05"}}',
      ],
    );
    assert.match(system.content, /You compare 2 answers/);
    assert.match(system.content, /- wrong_date: books another day/);
    assert.match(system.content, /\{"scores": \[score of answer 1, score of answer 2\]\}/);
    assert.equal(
      user.content,
      '[user] Table for 2 at Nobu on May 3.\n[answer 1] {"tool":"book_table","args":{"date":"2026-05-03"}}\n[answer 2] {"tool":"book_table","args":{"date":"2026-03-05"}}',
    );
  });

  it("reads exactly one score in [0, 1] per answer, and names anything else", () => {
    assert.deepEqual(parseGroupReply('{"scores":[1,0.25]}', 2), [1, 0.25]);
    const wrong: [string, RegExp][] = [
      ["scores: 1, 0", /not JSON/],
      ['{"scores":[1]}', /scores: expected 2 numbers, one per answer, got \[1\]/],
      ['{"scores":[1,1.5]}', /scores\[1\]: expected a number from 0 to 1, got 1\.5/],
      ['{"scores":[1,0],"why":"x"}', /fields it was not asked for: why/],
    ];
    for (const [text, message] of wrong)
      assert.throws(
        () => parseGroupReply(text, 2),
        (e: Error) => e instanceof JudgeReplyError && message.test(e.message),
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
