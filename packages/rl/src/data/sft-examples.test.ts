import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type OrderdeskSolution, orderdeskFamily, toolcallFamily } from "@arc/core/families";
import { rightApproachHint, sftExamples, teachingHint } from "./sft-examples.ts";

const tasks = toolcallFamily.generate({ split: "train", seed: 1, count: 200 });

describe("sftExamples", () => {
  it("targets the family's reference answer for every task", () => {
    const examples = sftExamples(toolcallFamily, tasks);
    assert.deepEqual(
      examples.map((e) => e.reply),
      tasks.map((t) => toolcallFamily.reference(t)[0]),
    );
    assert.ok(examples.every((e) => !e.guided));
  });

  it("puts teacher guidance in about the requested share of prompts, never the argument values", () => {
    const examples = sftExamples(toolcallFamily, tasks, { guidedFraction: 0.2, seed: 3 });
    const guided = examples.filter((e) => e.guided);
    assert.ok(guided.length > 20 && guided.length < 60, `${guided.length} guided of 200`);
    const i = examples.indexOf(guided[0]);
    const prompt = guided[0].messages.at(-1)?.content ?? "";
    // toolcall's guided prompt: the hint, then the request last, next to the answer
    assert.equal(prompt, `Hint: ${teachingHint(tasks[i])}\n${tasks[i].question}`);
  });

  it("adds a second, conversion-guided example for each request written in words, only when guidance is asked for", () => {
    const inWords = tasks.filter((t) => rightApproachHint(t) !== "");
    assert.ok(inWords.length > 0);
    assert.equal(sftExamples(toolcallFamily, tasks).length, tasks.length);
    const examples = sftExamples(toolcallFamily, tasks, { guidedFraction: 0.2, seed: 3 });
    assert.equal(examples.length, tasks.length + inWords.length);
    const lastTurn = (e: (typeof examples)[number]) => e.messages.at(-1)?.content ?? "";
    for (const task of inWords) {
      const copies = examples.filter((e) => lastTurn(e).includes(task.question));
      const short = copies.find((e) => lastTurn(e) === `Hint: ${rightApproachHint(task)}\n${task.question}`);
      assert.ok(short?.guided, task.question);
      assert.equal(short.reply, toolcallFamily.reference(task)[0]);
    }
  });

  it("hints the tool and argument names without the values", () => {
    const task = tasks.find((t) => (t.solution as { tool: string }).tool === "get_weather");
    assert.ok(task);
    const hint = teachingHint(task);
    assert.match(hint, /get_weather.*city, unit/);
    assert.ok(!hint.includes((task.solution as { args: { city: string } }).args.city));
  });

  it("teaches every turn of a multi-turn family, each in the conversation its session replays", () => {
    const desk = orderdeskFamily.generate({ split: "train", seed: 2, count: 20 });
    const examples = sftExamples(orderdeskFamily, desk);
    assert.equal(examples.length, desk.length * 2);
    for (const [i, task] of desk.entries()) {
      const [lookup, act] = examples.slice(2 * i, 2 * i + 2);
      const reference = orderdeskFamily.reference(task);
      assert.deepEqual([lookup.reply, act.reply], reference);
      assert.deepEqual(
        act.messages.map((m) => m.role),
        ["user", "assistant", "tool"],
      );
      assert.equal(act.messages[1].content, reference[0]);
      const order = (task.solution as OrderdeskSolution).order;
      assert.equal(JSON.parse(act.messages[2].content as string).status, order.status);
    }
  });
});
