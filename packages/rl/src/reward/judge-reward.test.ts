import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type GenResult, type JudgeClient, parseRubric, type VerifyResult } from "@arc/core";
import { toolcallFamily } from "@arc/core/families";
import { EmbeddedInferenceEngine, type RunningEngineServer, startEngineServer } from "@arc/engine";
import { bestWorstPair, groupAdvantages } from "../algo/index.ts";
import { parseRecipe } from "../recipe/index.ts";
import { buildReward } from "../run/build-reward.ts";
import { judgeReward } from "./judge-reward.ts";

const RUBRIC = {
  criteria: ["Call the tool the user asked for, with the values the user gave."],
  classes: [
    { name: "wrong_argument", description: "an argument differs from the request", severity: "high" },
  ],
};
const [task] = toolcallFamily.generate({ split: "production", seed: 3, count: 1 });
const sample = (text: string): GenResult =>
  ({ text, outputTokens: [1, 2], finishReason: "stop" }) as GenResult;
const verdict: VerifyResult = { status: "pass", reward: 1 };
const group = {
  task,
  samples: [
    sample(toolcallFamily.reference(task)[0]),
    sample('{"tool":"get_weather","args":{"city":"Nowhere"}}'),
  ],
  verdicts: [verdict, verdict],
};

// A real judge endpoint: `arc engine serve` on the shipped toolcall base, which was never trained to judge (its
// verdicts are constrained to the schema but mean nothing), so these tests check the reward's path, not its values.
describe("the judge reward, on a real OpenAI-compatible endpoint", () => {
  let engine: RunningEngineServer;
  let rubricPath: string;
  before(async () => {
    engine = await startEngineServer(await EmbeddedInferenceEngine.load("models/toolcall-base"), {
      modelId: "judge",
    });
    rubricPath = join(await mkdtemp(join(tmpdir(), "arc-judge-reward-")), "rubric.json");
    await writeFile(rubricPath, JSON.stringify(RUBRIC));
  });
  after(() => engine?.close());

  it("scores each sample in [0, 1] with one call, counts them, and answers again from its cache", async () => {
    const { reward, judgeUsage } = await buildReward(
      parseRecipe({
        reward: { kind: "judge", judge: { baseUrl: engine.baseURL, model: "judge", rubric: rubricPath } },
      }).reward,
    );
    const first = await reward(group);
    const spent = judgeUsage?.();
    assert.equal(spent?.calls, 2);
    if (first === null) {
      // the untrained judge's reply did not parse: the group is left out, never given a made-up reward
      assert.ok((spent?.unjudged ?? 0) > 0);
      assert.equal((spent?.unjudged ?? 0) + (spent?.scored ?? 0), 2);
      return;
    }
    assert.ok(
      first.every((r) => r >= 0 && r <= 1),
      JSON.stringify(first),
    );
    assert.deepEqual(await reward(group), first);
    assert.deepEqual(judgeUsage?.(), { ...spent, scored: 4 }, "the second time from the cache: no call");
  });

  it("scores a whole group in one call when asked to (RULER)", async () => {
    const { reward, judgeUsage } = await buildReward(
      parseRecipe({
        reward: {
          kind: "judge",
          judge: { baseUrl: engine.baseURL, model: "judge", rubric: rubricPath, mode: "group" },
        },
      }).reward,
    );
    const scores = await reward(group);
    assert.equal(judgeUsage?.().calls, 1, "one call for the group's two samples");
    if (scores === null) assert.equal(judgeUsage?.().unjudged, 2);
    else {
      assert.equal(scores.length, 2);
      assert.ok(
        scores.every((r) => r >= 0 && r <= 1),
        JSON.stringify(scores),
      );
    }
  });

  it("names what is missing from a judge reward's recipe", async () => {
    const bare = parseRecipe({ reward: { kind: "judge" } }).reward;
    await assert.rejects(
      buildReward(bare),
      /reward\.judge: expected a judge block \(baseUrl, model, rubric\)/,
    );
    const missing = parseRecipe({
      reward: {
        kind: "judge",
        judge: { baseUrl: engine.baseURL, model: "judge", rubric: "no/such/rubric.json" },
      },
    }).reward;
    await assert.rejects(buildReward(missing), /reward\.judge\.rubric: cannot read no\/such\/rubric\.json/);
    const keyless = parseRecipe({
      reward: {
        kind: "judge",
        judge: {
          baseUrl: engine.baseURL,
          model: "judge",
          rubric: rubricPath,
          apiKeyEnv: "ARC_TEST_NO_SUCH_KEY",
        },
      },
    }).reward;
    await assert.rejects(buildReward(keyless), /reward\.judge\.apiKeyEnv: ARC_TEST_NO_SUCH_KEY is not set/);
  });
});

describe("the judge reward when the judge cannot answer", () => {
  const rubric = parseRubric(RUBRIC);

  it("leaves the group out when the endpoint is down (a test double stands in for the outage)", async () => {
    const down: JudgeClient = {
      complete: async () => {
        throw new Error("the judge endpoint failed: connect ECONNREFUSED");
      },
    };
    const { reward, usage } = judgeReward({ rubric, model: "judge", client: down });
    assert.equal(await reward(group), null);
    assert.deepEqual(usage(), { calls: 2, tokens: 0, scored: 0, unjudged: 2 });
  });

  it("leaves the group out when a group verdict has the wrong number of scores (a test double writes it)", async () => {
    const miscounted: JudgeClient = { complete: async () => ({ content: '{"scores":[1,0,1]}', tokens: 9 }) };
    const { reward, usage } = judgeReward({ rubric, model: "judge", client: miscounted, mode: "group" });
    assert.equal(await reward(group), null);
    assert.deepEqual(usage(), { calls: 1, tokens: 9, scored: 0, unjudged: 2 });
  });

  it("spends no call past its budget, and leaves the group out (a test double answers a fixed verdict)", async () => {
    const fixed: JudgeClient = {
      complete: async () => ({
        content: JSON.stringify({
          failed: false,
          class: "none",
          severity: "none",
          evidence: "ok",
          confidence: 0.9,
        }),
        tokens: 40,
      }),
    };
    const { reward, usage } = judgeReward({
      rubric,
      model: "judge",
      client: fixed,
      budget: { callsPerMinute: 1, tokensPerMinute: 1_000 },
    });
    assert.equal(await reward(group), null);
    assert.deepEqual(usage(), { calls: 1, tokens: 40, scored: 1, unjudged: 1 });
  });
});

/**
 * TEST DOUBLE of a hosted judge endpoint (none can be reached here), over real HTTP: it passes every answer after
 * `delayMs`, answers HTTP 503 to its first `failFirst` calls, counts the calls it was sent, and the most calls it
 * worked on at once to an answer. A call its client gave up on (at the call's deadline) is left out of that peak: the
 * client is free to send the next one, while the judge may not yet have seen the hang-up.
 */
async function startCountingJudge(delayMs: number, failFirst = 0) {
  const seen = { calls: 0, peakAnswering: 0 };
  /** When each answered call arrived and when it was answered. */
  const answered: { from: number; to: number }[] = [];
  const server = createServer((req, res) => {
    const call = seen.calls++;
    const from = performance.now();
    req.resume();
    req.on("end", () =>
      setTimeout(() => {
        if (res.destroyed) return;
        const to = performance.now();
        answered.push({ from, to });
        seen.peakAnswering = Math.max(
          seen.peakAnswering,
          answered.filter((other) => other.from < to && from < other.to).length,
        );
        if (call < failFirst) {
          res.statusCode = 503;
          res.end("overloaded");
          return;
        }
        const verdict = { failed: false, class: "none", severity: "none", evidence: "ok", confidence: 0.9 };
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ choices: [{ message: { content: JSON.stringify(verdict) } }] }));
      }, delayMs),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("a training run's judge calls, bounded like a server's", () => {
  let rubricPath: string;
  before(async () => {
    rubricPath = join(await mkdtemp(join(tmpdir(), "arc-judge-bound-")), "rubric.json");
    await writeFile(rubricPath, JSON.stringify(RUBRIC));
  });
  /** A group of eight distinct answers (no two share a cached verdict). */
  const eight = {
    task,
    samples: ["Oslo", "Bergen", "Paris", "Rome", "Lima", "Quito", "Oulu", "Turku"].map((city) =>
      sample(`{"tool":"get_weather","args":{"city":"${city}"}}`),
    ),
    verdicts: Array.from({ length: 8 }, () => verdict),
  };
  const judgeBlock = (baseUrl: string, extra: Record<string, unknown>) =>
    parseRecipe({
      reward: { kind: "judge", judge: { baseUrl, model: "judge", rubric: rubricPath, ...extra } },
    }).reward;

  it("sends at most its concurrency at once, and tries a transient failure again", async () => {
    const judge = await startCountingJudge(20, 1);
    try {
      const { reward, judgeUsage, judgeQueue } = await buildReward(
        judgeBlock(judge.url, { concurrency: 2, retries: 1 }),
      );
      const scores = await reward(eight);
      assert.equal(scores?.length, 8, JSON.stringify(judgeUsage?.()));
      assert.equal(judge.seen.peakAnswering, 2, "eight samples judged two at a time");
      assert.equal(judge.seen.calls, 9, "the 503 tried again");
      assert.equal(judgeQueue?.stats().retried, 1);
      assert.equal(judgeQueue?.stats().peakInFlight, 2);
    } finally {
      await judge.close();
    }
  });

  it("holds the default of one call at a time, and leaves a sample unjudged at its deadline", async () => {
    const judge = await startCountingJudge(150);
    try {
      const { reward, judgeUsage, judgeQueue } = await buildReward(
        judgeBlock(judge.url, { deadlineMs: 400 }),
      );
      assert.equal(await reward(eight), null, "a group with unjudged samples is left out");
      assert.equal(judgeQueue?.stats().peakInFlight, 1);
      assert.equal(judge.seen.peakAnswering, 1);
      const usage = judgeUsage?.();
      assert.ok((usage?.unjudged ?? 0) >= 5, `past the deadline, unjudged: ${JSON.stringify(usage)}`);
      assert.equal((usage?.scored ?? 0) + (usage?.unjudged ?? 0), 8);
      assert.ok(
        judge.seen.calls <= 4,
        `calls past their deadline were never sent (${judge.seen.calls} sent)`,
      );
    } finally {
      await judge.close();
    }
  });
});

/**
 * TEST DOUBLE of a hosted LLM judge that ranks groups as RULER asks (none can be reached here), over real HTTP: it
 * reads the numbered answers of the prompt it is sent, and for each writes an explanation, then a score (1 for the
 * `right` answer, 0.6 for the right tool with another value, 0 for anything else), wrapped as a chat model often
 * wraps JSON: a sentence, then a code fence, the entries in reverse order.
 */
async function startRulerJudge(right: string) {
  const rightTool = (JSON.parse(right) as { tool: string }).tool;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const request = JSON.parse(body) as { messages: { content: string }[] };
      const answers = [...(request.messages.at(-1)?.content ?? "").matchAll(/^\[answer (\d+)\] (.*)$/gm)];
      const entries = answers.map(([, n, text]) => {
        const tool = text.includes(`"tool":"${rightTool}"`);
        const [explanation, score] =
          text === right
            ? ["calls the asked tool with the user's values", 1]
            : tool
              ? ["the asked tool, but a value differs from the user's", 0.6]
              : ["calls a tool the user did not ask for", 0];
        return { answer: Number(n), explanation, score };
      });
      const content = `I compared the answers.\n\`\`\`json\n${JSON.stringify({ scores: entries.reverse() })}\n\`\`\``;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ choices: [{ message: { content } }], usage: { total_tokens: 120 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("group scoring with explanations (RULER), for GRPO's advantages and DPO's pairs", () => {
  it("scores each answer after its explanation, ranking the right answer first and a wrong tool last", async () => {
    const right = toolcallFamily.reference(task)[0];
    const args = (JSON.parse(right) as { args: Record<string, unknown> }).args;
    const otherValue = JSON.stringify({
      tool: (JSON.parse(right) as { tool: string }).tool,
      args: Object.fromEntries(Object.keys(args).map((k) => [k, "Nowhere"])),
    });
    const judge = await startRulerJudge(right);
    const rubricPath = join(await mkdtemp(join(tmpdir(), "arc-judge-ruler-")), "rubric.json");
    await writeFile(rubricPath, JSON.stringify(RUBRIC));
    try {
      const { reward, judgeUsage } = await buildReward(
        parseRecipe({
          reward: {
            kind: "judge",
            judge: { baseUrl: judge.url, model: "ruler-judge", rubric: rubricPath, mode: "group" },
          },
        }).reward,
      );
      const texts = ['{"tool":"cancel_everything","args":{}}', right, otherValue];
      const scores = await reward({
        task,
        samples: texts.map(sample),
        verdicts: texts.map(() => verdict),
      });
      assert.deepEqual(scores, [0, 1, 0.6], "each score in its answer's place, whatever order the reply had");
      assert.deepEqual(judgeUsage?.(), { calls: 1, tokens: 120, scored: 3, unjudged: 0 });
      const advantages = groupAdvantages(scores as number[]);
      assert.ok(advantages[1] > advantages[2] && advantages[2] > advantages[0], JSON.stringify(advantages));
      assert.deepEqual(bestWorstPair(scores as number[]), { chosen: 1, rejected: 0, margin: 1 });
    } finally {
      await judge.close();
    }
  });
});
