import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  generateOrderdeskTasks,
  generateToolcallTasks,
  orderdeskFamily,
  toolcallFamily,
} from "@arc/core/families";
import { createEnvironment } from "./create-environment.ts";

describe("environments", () => {
  it("toolcall: shows the question, then ends with reward 1 for the right call and 0 for a wrong one", async () => {
    const [task] = generateToolcallTasks({ split: "eval", seed: 1, count: 1 });
    const env = createEnvironment("toolcall");
    assert.deepEqual((await env.reset(task, 0)).messages, [{ role: "user", content: task.question }]);
    const good = await env.step(toolcallFamily.reference(task)[0]);
    assert.deepEqual([good.reward, good.done], [1, true]);
    await env.reset(task, 0);
    assert.equal((await env.step("{}")).reward, 0);
  });

  it("orderdesk: answers a lookup with a tool message and rewards only at the end", async () => {
    const [task] = generateOrderdeskTasks({ split: "production", seed: 2, count: 1 });
    const env = createEnvironment("orderdesk");
    await env.reset(task, 0);
    const [lookup, action] = orderdeskFamily.reference(task);
    const first = await env.step(lookup);
    assert.deepEqual([first.reward, first.done, first.observation.messages.at(-1)?.role], [0, false, "tool"]);
    const second = await env.step(action);
    assert.deepEqual([second.reward, second.done], [1, true]);
    await assert.rejects(env.step(action), /call reset/);
  });

  it("refuses a task of another family and an unknown env id", async () => {
    const [task] = generateOrderdeskTasks({ split: "train", seed: 2, count: 1 });
    await assert.rejects(
      createEnvironment("toolcall").reset(task, 0),
      /task.env: expected "toolcall", got "orderdesk"/,
    );
    assert.throws(() => createEnvironment("go"), /env: expected one of toolcall, arith, orderdesk, got "go"/);
  });
});
