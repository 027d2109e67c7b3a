/** JSON Schemas a hostile tenant sends to make a grammar blow up, for the tests of the grammar's bounds. */

/** `levels` $defs, each `{anyOf: [{$ref: next}, {$ref: next}]}`, the last a string: 2^levels paths to one place. */
export function chainOfChoices(levels: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++)
    $defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] };
  $defs[`l${levels}`] = { type: "string" };
  return { $defs, $ref: "#/$defs/l0" };
}

/** `levels` $defs, each an object whose two required properties are the next: a document of 2^levels leaves. */
export function chainOfPairs(levels: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) {
    const next = { $ref: `#/$defs/l${i + 1}` };
    $defs[`l${i}`] = { type: "object", properties: { a: next, b: next }, required: ["a", "b"] };
  }
  $defs[`l${levels}`] = { type: "string" };
  return { $defs, $ref: "#/$defs/l0" };
}

/** Two equal alternatives that each nest the schema again: each level of nesting doubles the ways to read it. */
export function ambiguousNesting(): Record<string, unknown> {
  const nest = () => ({ type: "object", properties: { a: { $ref: "#" } }, required: ["a"] });
  return { anyOf: [nest(), nest()] };
}
