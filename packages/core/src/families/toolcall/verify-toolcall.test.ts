import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { verifyTask } from "../verify-task.ts";
import { verifyToolcall } from "./verify-toolcall.ts";

const weather = { tool: "get_weather", args: { city: "Paris", unit: "c" } };
const event = { tool: "add_event", args: { title: "Dentist", date: "2026-03-05", time: "14:00" } };
const fx = { tool: "convert_currency", args: { amount: 50, from: "USD", to: "EUR" } };

function judge(output: string, solution: unknown = weather) {
  return verifyToolcall({ outputs: [output], solution });
}

describe("toolcall verifier", () => {
  it("passes the exact reference call", () => {
    assert.deepEqual(judge('{"tool":"get_weather","args":{"city":"Paris","unit":"c"}}'), {
      status: "pass",
      reward: 1,
    });
  });

  it("passes arguments that differ only in case, whitespace, date format or time notation", () => {
    assert.equal(judge('{"tool":"get_weather","args":{"city":"  paris ","unit":"c"}}').status, "pass");
    assert.equal(
      judge('{"tool":"add_event","args":{"title":"dentist","date":"March 5","time":"2pm"}}', event).status,
      "pass",
    );
    assert.equal(
      judge('```json\n{"tool":"convert_currency","args":{"amount":50.0,"from":"usd","to":"eur"}}\n```', fx)
        .status,
      "pass",
    );
  });

  it("flags malformed JSON as a parse error", () => {
    const r = judge('{"tool":"get_weather","args":{"city":"Paris","unit":"c"}');
    assert.equal(r.failure?.class, "parse_error");
    assert.equal(r.reward, 0);
  });

  it("flags JSON that is not a tool call, and arguments off the schema, as schema violations", () => {
    assert.equal(judge('{"name":"get_weather"}').failure?.class, "schema_violation");
    const r = judge('{"tool":"get_weather","args":{"city":"Paris","unit":"kelvin"}}');
    assert.deepEqual([r.failure?.class, r.failure?.path], ["schema_violation", "get_weather.unit"]);
    assert.match(r.failure?.message ?? "", /expected one of c, f, got "kelvin"/);
  });

  it("flags a call to another tool as wrong_tool with expected→actual in the path", () => {
    const r = judge('{"tool":"add_event","args":{"title":"Paris","date":"2026-01-01","time":"10:00"}}');
    assert.deepEqual([r.failure?.class, r.failure?.path], ["wrong_tool", "get_weather→add_event"]);
    assert.equal(judge('{"tool":"weather","args":{}}').failure?.path, "get_weather→weather");
  });

  it("flags a wrong value as wrong_argument naming tool and argument", () => {
    const r = judge('{"tool":"get_weather","args":{"city":"Paris","unit":"f"}}');
    assert.deepEqual([r.failure?.class, r.failure?.path], ["wrong_argument", "get_weather.unit"]);
    assert.deepEqual([r.failure?.expected, r.failure?.actual], ["c", "f"]);
  });

  it("flags a call the tool cannot run as an execution error", () => {
    const r = judge('{"tool":"convert_currency","args":{"amount":50,"from":"USD","to":"XAU"}}', fx);
    assert.deepEqual([r.failure?.class, r.failure?.message], ["execution_error", "unsupported currency XAU"]);
    const d = judge(
      '{"tool":"add_event","args":{"title":"Dentist","date":"2026-02-30","time":"14:00"}}',
      event,
    );
    assert.equal(d.failure?.class, "execution_error");
  });

  it("says unknown, not pass, when there is no reference solution for a well-formed call", () => {
    const r = verifyToolcall({ outputs: ['{"tool":"get_weather","args":{"city":"Oslo","unit":"c"}}'] });
    assert.equal(r.status, "unknown");
    assert.equal(verifyToolcall({ outputs: ["{"] }).status, "fail");
  });
});

describe("verifyTask", () => {
  it("judges a task by its env's verifier and names the known envs for another", () => {
    assert.equal(
      verifyTask({ env: "toolcall", solution: weather }, [
        '{"tool":"get_weather","args":{"city":"Paris","unit":"c"}}',
      ]).reward,
      1,
    );
    assert.throws(
      () => verifyTask({ env: "chess", solution: 1 }, ["e4"]),
      /task.env: expected one of toolcall, arith, orderdesk, got "chess"/,
    );
  });

  it("calls a wrong tool wrong_tool even when its arguments also break that tool's schema", () => {
    const r = verifyTask({ env: "toolcall", solution: weather }, [
      '{"tool":"book_table","args":{"city":"Paris","unit":"c"}}',
    ]);
    assert.deepEqual([r.failure?.class, r.failure?.path], ["wrong_tool", "get_weather→book_table"]);
  });
});
