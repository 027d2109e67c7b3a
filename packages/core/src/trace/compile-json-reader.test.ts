import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { compileJsonReader, notAccepted } from "./compile-json-reader.ts";

describe("compileJsonReader", () => {
  it("refuses, when compiled, a schema it could not read exactly as zod does", () => {
    const schemas = [
      z.string().email(),
      z.string().trim(),
      z.number().multipleOf(2),
      z.object({ a: z.string() }).strict(),
      z.object({ a: z.string() }).catchall(z.number()),
      z.string().transform((s) => s.length),
      z.record(z.string().min(1), z.unknown()),
      z.boolean(),
      z.coerce.number(),
    ];
    for (const schema of schemas) assert.throws(() => compileJsonReader(schema), /is not supported/);
  });

  it("applies a refinement after the checks it refines, as zod does", () => {
    const schema = z.object({
      n: z
        .number()
        .int()
        .refine((n) => n % 2 === 0, "must be even"),
    });
    const read = compileJsonReader(schema);
    for (const value of [{ n: 2 }, { n: 3 }, { n: 2.5 }, { n: "2" }, {}]) {
      const parsed = schema.safeParse(value);
      assert.deepEqual(read(value), parsed.success ? parsed.data : notAccepted, JSON.stringify(value));
    }
  });

  it("applies every check of a number or string as zod does, at the boundaries", () => {
    const count = compileJsonReader(z.number().int().nonnegative().max(10));
    assert.deepEqual([0, -0, 10, 3].map(count), [0, -0, 10, 3]);
    for (const n of [-1, 10.5, 11, Number.NaN, Number.POSITIVE_INFINITY, "1"])
      assert.equal(count(n), notAccepted);
    const exclusive = compileJsonReader(z.number().gt(0).lt(1));
    assert.deepEqual([0, 0.5, 1].map(exclusive), [notAccepted, 0.5, notAccepted]);
    const id = compileJsonReader(
      z
        .string()
        .min(2)
        .max(3)
        .regex(/^[a-z]+$/g),
    );
    assert.deepEqual(["ab", "ab", "abcd", "a", "AB"].map(id), [
      "ab",
      "ab",
      notAccepted,
      notAccepted,
      notAccepted,
    ]);
  });

  it("returns the first union option that accepts, and fresh defaults", () => {
    const schema = z.object({ v: z.union([z.string(), z.number()]), list: z.array(z.string()).default([]) });
    const read = compileJsonReader(schema);
    const first = read({ v: 1 });
    const second = read({ v: "1" });
    assert.deepEqual(first, { v: 1, list: [] });
    assert.deepEqual(second, { v: "1", list: [] });
    assert.notEqual((first as { list: string[] }).list, (second as { list: string[] }).list);
    assert.equal(read({ v: true }), notAccepted);
  });
});
