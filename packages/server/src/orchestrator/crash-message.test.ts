import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { crashMessage } from "./crash-message.ts";

/** A real Node process that logs progress, then dies of a TypeError thrown a few calls deep, as a training run can. */
function crashedChildStderr(): string {
  const script = `
    console.error("step 1 loss 0.7");
    function rewardFn(result) { return result.status === "ok" ? 1 : 0; }
    function score(results) { return results.map((r) => rewardFn(r.output)); }
    function deeper(n) { return n === 0 ? score([{}]) : deeper(n - 1); }
    deeper(20);
  `;
  const child = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
  assert.notEqual(child.status, 0);
  return child.stderr;
}

describe("crashMessage", () => {
  it("names the thrown error and the frame that threw it, not the stack's tail", () => {
    const stderr = crashedChildStderr();
    const message = crashMessage(stderr);
    assert.match(
      message,
      /^TypeError: Cannot read properties of undefined \(reading 'status'\) \(at rewardFn /,
    );
    assert.doesNotMatch(message, /Node\.js v/);
  });

  it("leaves out the source line and caret Node prints above an uncaught error", () => {
    const stderr = [
      "node:internal/modules/run_main:123",
      "    triggerUncaughtException(",
      "    ^",
      "Error [ERR_MODULE_NOT_FOUND]: Cannot find module 'x.ts' imported from y.ts",
      "    at finalizeResolution (node:internal/modules/esm/resolve:283:11)",
      "",
      "Node.js v20.20.2",
    ].join("\n");
    assert.equal(
      crashMessage(stderr),
      "Error [ERR_MODULE_NOT_FOUND]: Cannot find module 'x.ts' imported from y.ts (at finalizeResolution (node:internal/modules/esm/resolve:283:11))",
    );
  });

  it("gives the last lines of output that has no stack", () => {
    assert.equal(
      crashMessage("loading\nrecipe: steps must be positive\n"),
      "loading | recipe: steps must be positive",
    );
  });
});
