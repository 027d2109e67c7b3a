import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { GrammarError, MAX_MASK_STEPS } from "./grammar-bounds.ts";
import { GrammarConstraint } from "./grammar-constraint.ts";
import { alive, GrammarMachine, type LiveStates } from "./grammar-machine.ts";
import { compileGrammar } from "./grammar-program.ts";
import { TokenVocabulary } from "./token-vocabulary.ts";

const encoder = new TextEncoder();
const STOP = 0;

/** A vocabulary of a stop token, every single byte, and `words` (multi-byte tokens). */
function vocabulary(words: string[]): TokenVocabulary {
  const tokens = [
    null,
    ...Array.from({ length: 256 }, (_, b) => new Uint8Array([b])),
    ...words.map((w) => encoder.encode(w)),
  ];
  return new TokenVocabulary(tokens.length, (id) => tokens[id]);
}

/** The states after every byte of `bytes`, stepping from `states` until none is left. */
function stepAll(machine: GrammarMachine, states: LiveStates, bytes: Uint8Array): LiveStates {
  for (const b of bytes) states = alive(states) ? machine.step(states, b) : states;
  return states;
}

const person = {
  type: "object",
  properties: {
    name: { type: "string" },
    age: { type: "integer" },
    tags: { type: "array", items: { enum: ["red", "green"] } },
    pet: { anyOf: [{ type: "null" }, { type: "object", properties: { kind: { const: "cat" } } }] },
  },
  required: ["name", "age", "tags", "pet"],
};

describe("grammar constraint over a vocabulary", () => {
  it("allows exactly the tokens whose every byte the grammar takes, walking the vocabulary in byte order", () => {
    const words = [
      '{"',
      '{"name":"',
      "name",
      '":',
      '",',
      'red"',
      "re",
      '"green"]',
      '],"pet":',
      "null}",
      '{"kind":"cat"}}',
      "12",
      "-0",
      "x",
      '"a',
    ];
    const vocab = vocabulary(words);
    const text = '{"name":"Ann","age":-12,"tags":["red","green"],"pet":{"kind":"cat"}}';
    const program = compileGrammar({ kind: "json-schema", schema: person });
    const constraint = new GrammarConstraint(program, vocab, new Set([STOP]));
    const machine = new GrammarMachine(program);
    let states = machine.start();
    const logits = new Float32Array(vocab.size);
    for (const byte of encoder.encode(text)) {
      const masked = constraint.mask(logits, 0, vocab.size);
      for (let id = 1; id < vocab.size; id++) {
        assert.equal(
          masked[id] === 0,
          alive(stepAll(machine, states, vocab.bytes[id] as Uint8Array)),
          `token ${JSON.stringify(new TextDecoder().decode(vocab.bytes[id] as Uint8Array))}`,
        );
      }
      assert.equal(masked[STOP] === 0, false, "the stop token waits for the end of the value");
      constraint.advance(1 + byte);
      states = machine.step(states, byte);
    }
    assert.equal(
      constraint.mask(logits, 0, vocab.size)[STOP],
      0,
      "the stop token is allowed once the value is whole",
    );
  });

  it("agrees with stepping each token alone on any JSON value under `true`", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 40 }),
        fc.jsonValue(),
        (words, value) => {
          const vocab = vocabulary(words);
          const program = compileGrammar({ kind: "json-schema", schema: true });
          const constraint = new GrammarConstraint(program, vocab, new Set([STOP]));
          const machine = new GrammarMachine(program);
          let states = machine.start();
          for (const byte of encoder.encode(JSON.stringify(value)).slice(0, 12)) {
            const masked = constraint.mask(new Float32Array(vocab.size), 0, vocab.size);
            for (let id = 257; id < vocab.size; id++) {
              const after = stepAll(machine, states, vocab.bytes[id] as Uint8Array);
              if ((masked[id] === 0) !== alive(after)) return false;
            }
            constraint.advance(1 + byte);
            states = machine.step(states, byte);
          }
          return true;
        },
      ),
      { numRuns: 60 },
    );
  });

  it("throws a GrammarError naming the bound when masking one token takes more than MAX_MASK_STEPS steps", () => {
    const schema = { enum: Array.from({ length: 5000 }, (_, i) => `v${i}`) };
    const constraint = new GrammarConstraint(
      compileGrammar({ kind: "json-schema", schema }),
      vocabulary([]),
      new Set([STOP]),
    );
    assert.throws(() => constraint.mask(new Float32Array(257), 0, 257), {
      name: "GrammarError",
      message: `masking the vocabulary for one token took more than ${MAX_MASK_STEPS} matcher steps`,
    });
  });

  it("throws a GrammarError when the grammar allows no token at all", () => {
    for (const schema of [{ anyOf: [] }, false] as const) {
      const constraint = new GrammarConstraint(
        compileGrammar({ kind: "json-schema", schema: schema as never }),
        vocabulary([]),
        new Set([STOP]),
      );
      assert.throws(
        () => constraint.mask(new Float32Array(257), 0, 257),
        (error: unknown) => error instanceof GrammarError && /allows no token/.test(error.message),
      );
    }
  });
});
