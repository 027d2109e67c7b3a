import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ambiguousNesting, chainOfChoices } from "./__fixtures__/hostile-schemas.ts";
import { GrammarError, MAX_LIVE_STATES, MAX_PROGRAM_NODES } from "./grammar-bounds.ts";
import { GrammarMachine, type LiveStates } from "./grammar-machine.ts";
import { compileGrammar, type GrammarProgram } from "./grammar-program.ts";

/** A machine on `schema`'s program and the states before its output. */
function machineOf(schema: Record<string, unknown> | true, before = "", after = "") {
  const machine = new GrammarMachine(compileGrammar({ kind: "json-schema", schema, before, after }));
  return { machine, states: machine.start() };
}

/** The states after the bytes of `text`. */
function read(machine: GrammarMachine, states: LiveStates, text: string): LiveStates {
  for (const byte of new TextEncoder().encode(text)) states = machine.step(states, byte);
  return states;
}

/** Whether the program of `schema` takes the whole of `text` and may end there. */
function matches(schema: Record<string, unknown> | true, text: string, before = "", after = ""): boolean {
  const { machine, states } = machineOf(schema, before, after);
  return read(machine, states, text).accepts;
}

const person = {
  type: "object",
  properties: {
    name: { type: "string" },
    age: { type: "integer" },
    height: { type: "number" },
    tags: { type: "array", items: { type: "string", enum: ["a", "b"] } },
    pet: { anyOf: [{ type: "null" }, { $ref: "#/$defs/pet" }] },
  },
  required: ["name", "age", "height", "tags", "pet"],
  additionalProperties: false,
  $defs: { pet: { type: "object", properties: { kind: { const: "cat" } }, required: ["kind"] } },
};

describe("grammar programs of JSON Schemas", () => {
  it("takes compact JSON of the schema, keys in its order", () => {
    assert.ok(matches(person, '{"name":"Zoë \\"Z\\"","age":-3,"height":1.5e3,"tags":["a","b"],"pet":null}'));
    assert.ok(matches(person, '{"name":"","age":0,"height":0.25,"tags":[],"pet":{"kind":"cat"}}'));
  });

  it("refuses what breaks the schema: a wrong type, enum, order, missing or extra key, leading zero", () => {
    const bad = [
      '{"name":1,"age":0,"height":1,"tags":[],"pet":null}',
      '{"name":"x","age":1.5,"height":1,"tags":[],"pet":null}',
      '{"name":"x","age":1,"height":1,"tags":["c"],"pet":null}',
      '{"age":1,"name":"x","height":1,"tags":[],"pet":null}',
      '{"name":"x","age":1,"height":1,"tags":[]}',
      '{"name":"x","age":1,"height":1,"tags":[],"pet":null,"more":1}',
      '{"name":"x","age":01,"height":1,"tags":[],"pet":null}',
      '{"name":"x","age":1,"height":1,"tags":[],"pet":{"kind":"dog"}}',
      '{"name":"x", "age":1,"height":1,"tags":[],"pet":null}',
    ];
    for (const text of bad) assert.equal(matches(person, text), false, text);
    assert.equal(matches(person, '{"name":"x"'), false, "an unfinished object may not end");
  });

  it("lets optional properties be left out", () => {
    const schema = {
      type: "object",
      properties: { a: { type: "integer" }, b: { type: "boolean" } },
      required: ["b"],
    };
    assert.ok(matches(schema, '{"b":true}'));
    assert.ok(matches(schema, '{"a":1,"b":false}'));
    assert.equal(matches(schema, '{"a":1}'), false);
  });

  it("takes any compact JSON value under `true`, and any object under {type: object}", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => matches(true, JSON.stringify(value))),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) =>
        matches({ type: "object" }, JSON.stringify(value)),
      ),
      { numRuns: 200 },
    );
    assert.equal(matches({ type: "object" }, "[1]"), false);
  });

  it("wraps the value in the literal text before and after it", () => {
    assert.ok(matches({ type: "integer" }, '<call>{"n": 7}</call>', '<call>{"n": ', "}</call>"));
    assert.equal(matches({ type: "integer" }, '<call>{"n": 7}', '<call>{"n": ', "}</call>"), false);
  });

  it("follows a schema that refers to itself inside an object's properties, as deep as the text goes", () => {
    const tree = {
      type: "object",
      properties: { label: { type: "string" }, children: { type: "array", items: { $ref: "#" } } },
      required: ["label", "children"],
    };
    assert.ok(
      matches(tree, '{"label":"a","children":[{"label":"b","children":[{"label":"c","children":[]}]}]}'),
    );
    assert.equal(matches(tree, '{"label":"a","children":[{"label":"b"}]}'), false);
  });

  it("merges alternatives that lead to the same place: 16 levels of anyOf over two $refs to the next step in linear time", () => {
    const started = performance.now();
    const { machine, states } = machineOf(chainOfChoices(16));
    assert.equal(states.nodes.length, 1, "both branches of every level are one state");
    assert.ok(read(machine, states, '"abc"').accepts);
    assert.ok(performance.now() - started < 1000, `took ${performance.now() - started} ms`);
  });

  it("refuses a $ref cycle that writes nothing, naming it; a program that loops without reading is no output", () => {
    assert.throws(
      () => compileGrammar({ kind: "json-schema", schema: { $ref: "#" } }),
      (error: unknown) => error instanceof GrammarError && /\(a \$ref cycle\)/.test(error.message),
    );
    const loop: GrammarProgram = {
      start: 0,
      nodes: [
        [1, 1],
        [1, 0],
      ],
    };
    const states = new GrammarMachine(loop).start();
    assert.deepEqual([states.nodes, states.accepts], [[], false]);
  });

  it("throws a GrammarError naming the bound when ambiguous recursion holds more than MAX_LIVE_STATES states", () => {
    // two equal alternatives that each recurse: every level of nesting doubles the ways to read the text
    const { machine, states } = machineOf(ambiguousNesting());
    assert.throws(
      () => read(machine, states, '{"a":'.repeat(20)),
      (error: unknown) =>
        error instanceof GrammarError &&
        error.message.includes(`more than ${MAX_LIVE_STATES} states at once`),
    );
  });

  it("refuses a grammar that compiles to more than MAX_PROGRAM_NODES nodes, naming the bound", () => {
    const values = Array.from({ length: 2_000 }, (_, i) => `${"x".repeat(120)}${i}`);
    assert.throws(
      () => compileGrammar({ kind: "json-schema", schema: { enum: values } }),
      (error: unknown) =>
        error instanceof GrammarError && error.message.includes(`more than ${MAX_PROGRAM_NODES} nodes`),
    );
  });
});
