import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { describe, it } from "node:test";
import type { Task } from "@arc/core";
import { RolloutController } from "./rollout-controller.ts";
import type { ScoredGroup } from "./scored-group.ts";

const task = (index: number): Task => ({ id: `t${index}`, env: "toolcall", question: "q", solution: {} });
const group = (index: number, version: number): ScoredGroup => ({
  task: task(index),
  samples: [],
  rewards: [index],
  passed: [false],
  versionRange: [version, version],
});

function controller(maxStaleness: number, maxConcurrentRollouts = 100) {
  const submitted: number[] = [];
  const c = new RolloutController({
    batchSize: 2,
    maxStaleness,
    maxConcurrentRollouts,
    taskOf: task,
    submit: (index) => submitted.push(index),
  });
  return { c, submitted };
}

describe("RolloutController", () => {
  it("starts only the current step's rollouts when synchronous (maxStaleness 0)", () => {
    const { c, submitted } = controller(0);
    c.pump();
    assert.deepEqual(submitted, [0, 1]);
    c.complete(0, group(0, 0));
    c.complete(1, group(1, 0));
    assert.deepEqual(submitted, [0, 1]);
    c.setVersion(1);
    assert.deepEqual(submitted, [0, 1, 2, 3]);
  });

  it("rejects a waiting batch when the generator fails, instead of waiting forever", async () => {
    const { c } = controller(0);
    c.complete(0, group(0, 0));
    const waiting = c.batch(1);
    c.fail(new Error("rollout worker exited (code 1)"));
    await assert.rejects(waiting, { message: "rollout worker exited (code 1)" });
    await assert.rejects(c.batch(2), { message: "rollout worker exited (code 1)" });
  });

  it("leaves no abort listener behind on the run's signal however often a batch waits, and still stops on abort", async () => {
    const { c } = controller(0);
    c.pump();
    const run = new AbortController();
    const waiting = c.batch(1, run.signal);
    for (let wake = 0; wake < 20; wake++) {
      c.complete(100 + wake, null);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(getEventListeners(run.signal, "abort").length, 1, "only the wait in progress listens");
    c.complete(0, group(0, 0));
    c.complete(1, group(1, 0));
    assert.equal((await waiting).length, 2);
    assert.equal(getEventListeners(run.signal, "abort").length, 0);
    const stopped = c.batch(2, run.signal);
    run.abort(new Error("run cancelled"));
    await assert.rejects(stopped, { message: "run cancelled" });
  });

  it("runs up to maxStaleness steps ahead of the trainer", () => {
    const { c, submitted } = controller(2);
    c.pump();
    assert.deepEqual(submitted, [0, 1, 2, 3, 4, 5]);
    c.setVersion(1);
    assert.deepEqual(submitted, [0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("keeps no more than maxConcurrentRollouts in flight", () => {
    const { c, submitted } = controller(5, 3);
    c.pump();
    assert.equal(c.inFlight(), 3);
    c.complete(0, group(0, 0));
    assert.deepEqual(submitted, [0, 1, 2, 3]);
  });

  it("hands a step's groups in data order, whatever order they finish in, and drops rejected ones", async () => {
    const { c } = controller(1);
    c.pump();
    const pending = c.batch(1);
    c.complete(1, group(1, 0));
    c.complete(0, group(0, 0));
    assert.deepEqual(
      (await pending).map((g) => g.task.id),
      ["t0", "t1"],
    );
    const second = c.batch(2);
    c.complete(3, null);
    c.complete(2, group(2, 0));
    assert.deepEqual(
      (await second).map((g) => g.task.id),
      ["t2"],
    );
  });

  it("numbers a resumed run's rollouts from its checkpoint step", () => {
    const submitted: number[] = [];
    const c = new RolloutController({
      batchSize: 4,
      maxStaleness: 0,
      maxConcurrentRollouts: 100,
      taskOf: task,
      submit: (i) => submitted.push(i),
      version: 3,
    });
    c.pump();
    assert.deepEqual(submitted, [12, 13, 14, 15]);
  });
});
