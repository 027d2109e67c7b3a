/**
 * The torch engine runs the prefix that every row of a batch begins with (a request's n samples, a rollout batch's
 * system prompt) once, then each row's own rest: the same tokens and log-probs as prefilling every row whole, for
 * fewer positions run. On a small random Llama in a real Python process.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { torchUnavailable } from "./__fixtures__/torch-available.ts";
import { TORCH_WORKER_DIR, torchPython } from "./torch-worker.ts";

const CHECK = fileURLToPath(new URL("./__fixtures__/prefix_sharing_check.py", import.meta.url));

describe("the torch engine's shared-prefix prefill", { skip: torchUnavailable() }, () => {
  it("answers as a whole prefill does, having run the shared prefix once", () => {
    const run = spawnSync(torchPython(), [CHECK], {
      encoding: "utf8",
      env: { ...process.env, PYTHONPATH: TORCH_WORKER_DIR },
    });
    assert.equal(run.status, 0, run.stderr);
    const check = JSON.parse(run.stdout.trim().split("\n").pop() as string);
    assert.equal(check.sameTokens, true);
    assert.ok(check.maxLogprobDiff < 1e-4, `log-probs differ by up to ${check.maxLogprobDiff}`);
    // five rows of a 50-token shared prefix: the plain prefill runs it five times, the shared one once
    assert.ok(
      check.positionsShared <= check.positionsPlain - 4 * 50,
      `${check.positionsShared} positions run with sharing, ${check.positionsPlain} without`,
    );
  });
});
