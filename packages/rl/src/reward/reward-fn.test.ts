import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defineTaskFamily, type GenResult, type Task, taskFamilies, type VerifyResult } from "@arc/core";
import { partialCreditReward, verifierReward, withPenalties } from "./reward-fn.ts";

const task: Task = { id: "t", env: "toolcall", question: "q", solution: {} };
const sample = (tokens: number, finishReason: GenResult["finishReason"] = "stop"): GenResult => ({
  sampleIndex: 0,
  text: "",
  promptTokens: [],
  outputTokens: new Array(tokens).fill(1),
  outputLogprobs: [],
  outputVersions: [],
  finishReason,
});
const pass: VerifyResult = { status: "pass", reward: 1 };
const wrongArg: VerifyResult = {
  status: "fail",
  reward: 0,
  failure: { class: "wrong_argument", message: "m" },
};
const parse: VerifyResult = { status: "fail", reward: 0, failure: { class: "parse_error", message: "m" } };

describe("rewards", () => {
  it("passes the verifier's score through", () => {
    assert.equal(verifierReward({ task, sample: sample(3), verdict: pass }), 1);
    assert.equal(verifierReward({ task, sample: sample(3), verdict: wrongArg }), 0);
  });

  it("ranks a wrong argument above an unparseable output under partial credit", () => {
    const r = (verdict: VerifyResult) => partialCreditReward({ task, sample: sample(3), verdict });
    assert.ok(r(pass) > r(wrongArg) && r(wrongArg) > r(parse));
  });

  it("subtracts detector penalties for truncation and length over the limit", () => {
    const reward = withPenalties(verifierReward, {
      truncated: 0.5,
      perTokenOverLimit: 0.01,
      lengthLimit: 10,
    });
    assert.equal(reward({ task, sample: sample(5), verdict: pass }), 1);
    assert.equal(reward({ task, sample: sample(5, "length"), verdict: pass }), 0.5);
    assert.ok(Math.abs(reward({ task, sample: sample(30), verdict: pass }) - 0.8) < 1e-9);
  });

  it("gives a toolcall output more credit the more of its arguments are right", () => {
    const tool: Task = {
      id: "w",
      env: "toolcall",
      question: "q",
      solution: { tool: "get_weather", args: { city: "Oslo", unit: "c" } },
    };
    const out = (text: string): GenResult => ({ ...sample(3), text });
    const oneRight = partialCreditReward({
      task: tool,
      sample: out('{"tool":"get_weather","args":{"city":"Oslo","unit":"f"}}'),
      verdict: wrongArg,
    });
    const noneRight = partialCreditReward({
      task: tool,
      sample: out('{"tool":"get_weather","args":{"city":"Rome","unit":"f"}}'),
      verdict: wrongArg,
    });
    assert.ok(
      Math.abs(oneRight - 0.65) < 1e-9 && Math.abs(noneRight - 0.4) < 1e-9,
      `${oneRight} ${noneRight}`,
    );
  });

  it("grades a failure by its family's partialCredit hook, and by the failure's class for a family without one", () => {
    const graded = defineTaskFamily({
      env: "graded-test",
      prompt: (t) => [{ role: "user", content: t.question }],
      reference: () => ["x"],
      partialCredit: (_task, output) => (output === "close" ? 0.7 : undefined),
    });
    taskFamilies.register(graded);
    try {
      const gradedTask = { ...task, env: graded.env };
      const credit = (text: string) =>
        partialCreditReward({ task: gradedTask, sample: { ...sample(1), text }, verdict: wrongArg });
      assert.equal(credit("close"), 0.7);
      assert.equal(credit("far"), 0.5);
    } finally {
      taskFamilies.unregister(graded.env);
    }
  });
});
