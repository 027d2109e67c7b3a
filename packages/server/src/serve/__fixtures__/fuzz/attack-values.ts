/**
 * Computation a tenant can hand Arc, as fast-check arbitraries: JSON schemas whose grammar or validation grows
 * exponentially with their depth, schemas that refer to themselves, regexes that backtrack exponentially on the
 * argument sent with them, and `$id`/`$ref` pairs by which one tenant's schema could reach another's.
 */
import fc from "fast-check";

type Json = Record<string, unknown>;

/** A tool schema and an argument object sent with it (a tool call's arguments, a reward's answer). */
export interface SchemaAttack {
  /** What it is, in words, for failure reports. */
  label: string;
  schema: Json;
  argument: Json;
}

/**
 * `levels` `$defs` from the root down, each `{anyOf|oneOf: [{$ref: next}, {$ref: next}]}` (or an object of two
 * properties that both refer to the next): about 75 bytes per level, and a grammar or a validation that doubles with
 * each level when nothing merges or bounds it.
 */
const deepSchema: fc.Arbitrary<SchemaAttack> = fc
  .record({
    levels: fc.integer({ min: 12, max: 20 }),
    shape: fc.constantFrom("anyOf", "oneOf", "properties"),
  })
  .map(({ levels, shape }) => {
    const $defs: Json = { [`d${levels}`]: { type: "string" } };
    for (let i = 0; i < levels; i++) {
      const next = { $ref: `#/$defs/d${i + 1}` };
      $defs[`d${i}`] =
        shape === "properties"
          ? { type: "object", properties: { a: next, b: next }, required: ["a", "b"] }
          : { [shape]: [next, next] };
    }
    return {
      label: `${levels} $defs levels of ${shape} doubling`,
      schema: { $ref: "#/$defs/d0", $defs },
      argument: { x: "y" },
    };
  });

/** Schemas that refer to themselves, some with no finite instance at all. */
const cyclicSchema: fc.Arbitrary<SchemaAttack> = fc
  .constantFrom<[string, Json]>(
    ['{"$ref":"#"}', { $ref: "#" }],
    ['{"anyOf":[{"$ref":"#"}]}', { anyOf: [{ $ref: "#" }] }],
    ['{"allOf":[{"$ref":"#"}]}', { allOf: [{ $ref: "#" }] }],
    [
      "two $defs referring to each other",
      { $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" },
    ],
    ["an object that requires itself", { type: "object", properties: { x: { $ref: "#" } }, required: ["x"] }],
    ["an array of at least one of itself", { type: "array", items: { $ref: "#" }, minItems: 1 }],
  )
  .map(([label, schema]) => ({ label: `cyclic: ${label}`, schema, argument: { x: "y" } }));

/** Regexes that backtrack exponentially, each with the letter its runaway input repeats. */
const REGEXES: [pattern: string, letter: string][] = [
  ["^(a+)+$", "a"],
  ["^(a|a)*$", "a"],
  ["^(a|aa)+$", "a"],
  ["^(a*)*$", "a"],
  ["^(\\w+\\s?)*$", "a"],
  ["(x+x+)+y", "x"],
];

/** A string property with a backtracking `pattern`, and an argument of 24 to 34 of its letter then `!`. */
const regexSchema: fc.Arbitrary<SchemaAttack> = fc
  .record({ regex: fc.constantFrom(...REGEXES), n: fc.integer({ min: 24, max: 34 }) })
  .map(({ regex: [pattern, letter], n }) => ({
    label: `pattern ${pattern} against ${letter}×${n}!`,
    schema: { type: "object", properties: { x: { type: "string", pattern } }, required: ["x"] },
    argument: { x: `${letter.repeat(n)}!` },
  }));

/** Any schema attack: deep, cyclic or a backtracking regex. */
export const schemaAttack: fc.Arbitrary<SchemaAttack> = fc.oneof(deepSchema, cyclicSchema, regexSchema);

/** A schema `$id` one tenant gives and another refers to, with a value only the first tenant knows. */
export interface IdPair {
  id: string;
  secret: string;
}

export const idPair: fc.Arbitrary<IdPair> = fc.record({
  id: fc.oneof(
    fc.constantFrom("https://arc.test/schemas/lookup.json", "urn:arc:lookup", "lookup.json", "#lookup"),
    fc.webUrl().map((url) => `${url.replace(/[#?].*$/, "")}/schema.json`),
  ),
  secret: fc.stringMatching(/^[A-Z]{6,12}$/).map((s) => `SECRET-${s}`),
});
