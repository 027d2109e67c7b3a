import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SPLITS } from "../tasks/split.ts";
import type { ArithSolution } from "./arith/arith-tasks.ts";
import { arithFamily, orderdeskFamily, toolcallFamily } from "./index.ts";
import { getTaskFamily } from "./task-families.ts";
import {
  type ToolcallSolution,
  toolcallConversionKind,
  toolcallConversions,
  ungroundedToolcallConversions,
} from "./toolcall/toolcall-tasks.ts";
import { verifyTask } from "./verify-task.ts";

/** A solution as PostgreSQL's jsonb gives it back: every object's keys sorted (shorter first, then bytewise). */
function jsonbOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonbOrder);
  if (value === null || typeof value !== "object") return value;
  const keys = Object.keys(value).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(keys.map((k) => [k, jsonbOrder((value as Record<string, unknown>)[k])]));
}

describe("built-in task families", () => {
  for (const family of [toolcallFamily, arithFamily, orderdeskFamily]) {
    it(`${family.env}: writes the same reference answer for a solution read back with its keys reordered`, () => {
      for (const task of family.generate({ split: "production", seed: 3, count: 60 })) {
        const stored = { ...task, solution: jsonbOrder(task.solution) };
        assert.deepEqual(family.reference(stored), family.reference(task), task.question);
      }
    });

    it(`${family.env}: gives the same tasks for the same seed and different ones for another seed`, () => {
      const a = family.generate({ split: "train", seed: 7, count: 50 });
      const b = family.generate({ split: "train", seed: 7, count: 50 });
      const c = family.generate({ split: "train", seed: 8, count: 50 });
      assert.deepEqual(a, b);
      assert.notDeepEqual(
        a.map((t) => t.question),
        c.map((t) => t.question),
      );
    });

    it(`${family.env}: keeps questions under 120 characters and reference outputs under 85`, () => {
      for (const split of SPLITS) {
        for (const task of family.generate({ split, seed: 1, count: 300 })) {
          assert.ok(task.question.length < 120, task.question);
          for (const out of family.reference(task)) assert.ok(out.length < 85, out);
        }
      }
    });

    it(`${family.env}: every reference output passes the family's verifier on every split`, () => {
      for (const split of SPLITS) {
        for (const task of family.generate({ split, seed: 3, count: 300 })) {
          const result = family.verify({ outputs: family.reference(task), solution: task.solution });
          assert.equal(result.status, "pass", `${task.question} → ${JSON.stringify(result.failure)}`);
        }
      }
    });
  }

  it("toolcall: shifts production toward booking, toward names and amounts train under-covers and toward a rare phrasing", () => {
    const train = toolcallFamily.generate({ split: "train", seed: 1, count: 2000 });
    const prod = toolcallFamily.generate({ split: "production", seed: 1, count: 2000 });
    const share = (tasks: typeof train, tool: string) =>
      tasks.filter((t) => (t.solution as ToolcallSolution).tool === tool).length / tasks.length;
    assert.ok(share(prod, "book_table") > 2 * share(train, "book_table"));
    const productionCities = [
      "Reykjavik",
      "Nairobi",
      "Hanoi",
      "Quito",
      "Perth",
      "Zagreb",
      "São Paulo",
      "New Delhi",
    ];
    const cityShare = (tasks: typeof train) => {
      const cities = tasks.flatMap((t) =>
        (t.solution as ToolcallSolution).tool === "get_weather"
          ? [(t.solution as ToolcallSolution).args.city]
          : [],
      );
      return cities.filter((c) => productionCities.includes(String(c))).length / cities.length;
    };
    assert.ok(
      cityShare(train) > 0 && cityShare(train) < 0.1,
      `train under-covers production's cities: ${cityShare(train)}`,
    );
    assert.ok(cityShare(prod) > 0.6, `production leans on its own cities: ${cityShare(prod)}`);
    const largeAmounts = (tasks: typeof train) =>
      tasks.filter((t) => Number((t.solution as ToolcallSolution).args.amount) > 500).length / tasks.length;
    assert.ok(largeAmounts(prod) > 5 * largeAmounts(train) && largeAmounts(train) > 0);
    const thirdTemplate = (tasks: typeof train) =>
      tasks.filter((t) => String(t.meta?.template).endsWith("2")).length / tasks.length;
    assert.ok(thirdTemplate(prod) > 0.25, "production phrases a third of its requests the third way");
    assert.ok(
      thirdTemplate(train) > 0 && thirdTemplate(train) < 0.1,
      "train shows that phrasing only rarely",
    );
    assert.ok(
      prod.some((t) => /How many \w+ is/.test(t.question)),
      "production names currencies instead of codes",
    );
  });

  it("arith: shifts production toward numbers and a phrasing train under-covers, and toward two-step problems", () => {
    const train = arithFamily.generate({ split: "train", seed: 1, count: 2000 });
    const prod = arithFamily.generate({ split: "production", seed: 1, count: 2000 });
    const share = (tasks: typeof train, has: (t: (typeof train)[number]) => boolean) =>
      tasks.filter(has).length / tasks.length;
    const hasLargeNumber = (t: (typeof train)[number]) =>
      (t.solution as ArithSolution).expr.split(/[-+*/]/).some((n) => Number(n) > 99);
    assert.ok(share(prod, hasLargeNumber) > 0.7, "production's numbers reach 400");
    const trainLarge = share(train, hasLargeNumber);
    assert.ok(trainLarge > 0.1 && trainLarge < 0.4, `train shows them less often: ${trainLarge}`);
    const secondPhrasing = (t: (typeof train)[number]) => t.meta?.phrasing === 1;
    assert.ok(share(prod, secondPhrasing) > 0.4, "production asks half its problems the second way");
    const trainSecond = share(train, secondPhrasing);
    assert.ok(trainSecond > 0 && trainSecond < 0.12, `train uses it rarely: ${trainSecond}`);
    const mix = (t: (typeof train)[number]) => t.meta?.op === "mix";
    assert.ok(share(prod, mix) > 1.3 * share(train, mix), "production has more two-step problems");
  });

  for (const family of [toolcallFamily, arithFamily, orderdeskFamily]) {
    it(`${family.env}: never asks an eval question that train asks, however many are drawn`, () => {
      const train = new Set(family.generate({ split: "train", seed: 1, count: 3000 }).map((t) => t.question));
      const evalQuestions = family.generate({ split: "eval", seed: 2, count: 500 }).map((t) => t.question);
      assert.deepEqual(
        evalQuestions.filter((q) => train.has(q)),
        [],
      );
    });
  }

  it("rejects generate options that name an unknown split or a negative count", () => {
    assert.throws(
      () => arithFamily.generate({ split: "test" as never, seed: 1, count: 1 }),
      /split: expected one of train, eval, production, got "test"/,
    );
    assert.throws(
      () => toolcallFamily.generate({ split: "train", seed: 1, count: -1 }),
      /count: expected a non-negative integer, got -1/,
    );
  });

  it("names the known env ids when asked for an unknown one", () => {
    assert.throws(
      () => getTaskFamily("chess"),
      /env: expected one of toolcall, arith, orderdesk, got "chess"/,
    );
  });
});

describe("toolcallConversions", () => {
  const tasks = toolcallFamily.generate({ split: "production", seed: 5, count: 300 });
  const byTemplate = (template: string) => tasks.filter((t) => t.meta?.template === template);

  it("names the month and the 24-hour hour of a request written in words, never a whole value", () => {
    for (const task of byTemplate("event2")) {
      const { date, time } = (task.solution as ToolcallSolution).args as { date: string; time: string };
      const [month, hour] = toolcallConversions(task);
      assert.match(month, new RegExp(`^[A-Z][a-z]+ is month ${date.slice(5, 7)}$`));
      assert.ok(task.question.includes(month.split(" ")[0]), `${task.question} / ${month}`);
      if (task.question.includes(time)) assert.equal(hour, undefined, "11:30am already shows 11:30");
      else assert.match(hour, new RegExp(`^\\d{1,2}(:\\d\\d)?[ap]m is hour ${time.slice(0, 2)}$`));
      assert.ok(![date, time].some((value) => `${month} ${hour}`.includes(value)));
    }
    assert.ok(byTemplate("event2").length > 10);
  });

  it("has nothing to say when the request already writes dates and times as the call does", () => {
    for (const template of ["event0", "book1", "weather2", "fx2"])
      for (const task of byTemplate(template)) {
        assert.deepEqual(toolcallConversions(task), [], task.question);
        assert.equal(toolcallConversionKind(task), null, task.question);
      }
  });

  it("names a request's kind of conversions by its tool and the parts converted", () => {
    const kinds = new Set(tasks.map(toolcallConversionKind));
    assert.deepEqual([...kinds].sort(), [
      "add_event:month",
      "add_event:month+hour",
      "book_table:month",
      null,
    ]);
    for (const task of byTemplate("book2")) assert.equal(toolcallConversionKind(task), "book_table:month");
    const atHalfPast = byTemplate("event2").find((t) =>
      t.question.includes((t.solution as ToolcallSolution).args.time as string),
    );
    assert.equal(atHalfPast && toolcallConversionKind(atHalfPast), "add_event:month", atHalfPast?.question);
  });

  it("finds the conversions a teaching states that its request does not support", () => {
    for (const task of tasks) {
      const own = toolcallConversions(task);
      assert.deepEqual(ungroundedToolcallConversions(task.question, `${own.join("; ")}.`), [], task.question);
    }
    const event = "Put Standup in my calendar for March 5 at 3pm.";
    assert.deepEqual(
      ungroundedToolcallConversions(
        event,
        "March is month 03; 3pm is hour 15; July is month 07; March is month 07; 3pm is hour 03; 11pm is hour 23.",
      ),
      ["July is month 07", "March is month 07", "3pm is hour 03", "11pm is hour 23"],
    );
    // a time the request writes inside a longer one is not mentioned ("1pm" in "11pm")
    assert.deepEqual(ungroundedToolcallConversions("Dinner at 11pm.", "1pm is hour 13."), ["1pm is hour 13"]);
  });
});

describe("an env named after an Object property", () => {
  it("is an unknown family and an unknown verifier, not Object's own members", () => {
    for (const env of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      assert.throws(() => getTaskFamily(env), /env: expected one of/);
      assert.throws(() => verifyTask({ env, solution: 1 }, ["x"]), /task\.env: expected one of/);
    }
  });
});
