import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { waitUntil } from "./wait-until.ts";

describe("waitUntil", () => {
  it("returns the first value the check produces once the condition holds", async () => {
    let calls = 0;
    const value = await waitUntil(() => (++calls >= 3 ? `ready after ${calls}` : undefined), "three calls", {
      intervalMs: 1,
    });
    assert.equal(value, "ready after 3");
  });

  it("keeps checking while an async check answers false or null", async () => {
    const answers: (boolean | null | number)[] = [false, null, 0];
    const value = await waitUntil(async () => answers.shift() as number | false | null, "a number", {
      intervalMs: 0,
    });
    assert.equal(value, 0, "0 is a value, not a miss");
  });

  it("throws naming what it waited for when the deadline passes", async () => {
    const started = Date.now();
    await assert.rejects(
      waitUntil(() => false, "the queue to drain", { timeoutMs: 60, intervalMs: 10 }),
      /timed out after 60 ms waiting for the queue to drain/,
    );
    assert.ok(Date.now() - started >= 60);
  });

  it("propagates an error thrown by the check at once", async () => {
    await assert.rejects(
      waitUntil(
        () => {
          throw new Error("server answered 500");
        },
        "a page",
        { timeoutMs: 5_000 },
      ),
      /server answered 500/,
    );
  });
});
