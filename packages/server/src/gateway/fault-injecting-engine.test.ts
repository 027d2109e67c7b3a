import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TokenEvent } from "@arc/core";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import { FAULT_INJECTED_OUTPUT, FaultInjectingEngine, FaultInjection } from "./fault-injecting-engine.ts";

const ask = (i: number) => ({ messages: [{ role: "user", content: `q${i}` }] });

describe("FaultInjectingEngine", () => {
  it("replaces about `rate` of the answers with a call to a tool that does not exist, streamed as one event", async () => {
    const engine = new FaultInjectingEngine(
      new AnswerBookEngine(new Map(), "fine"),
      FaultInjection.parse({ mode: "wrong_output", rate: 0.3, seed: 7 }),
    );
    let faulty = 0;
    for (let i = 0; i < 200; i++) {
      const events: TokenEvent[] = [];
      const [r] = await engine.generate([ask(i)], { onToken: (e) => events.push(e) });
      if (r.text === FAULT_INJECTED_OUTPUT) faulty++;
      assert.equal(events.map((e) => e.textDelta).join(""), r.text);
      assert.equal(events.at(-1)?.finishReason, "stop");
    }
    assert.ok(faulty > 35 && faulty < 85, `${faulty} of 200 at rate 0.3`);
  });

  it("makes generation throw in error mode", async () => {
    const engine = new FaultInjectingEngine(
      new AnswerBookEngine(new Map()),
      FaultInjection.parse({ mode: "error" }),
    );
    await assert.rejects(engine.generate([ask(0)]), /fault injection: generation failed on purpose/);
  });

  it("rejects an unknown mode, naming it", () => {
    assert.throws(() => FaultInjection.parse({ mode: "slow" }), /mode/);
  });
});
