import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "../errors/index.ts";
import { compileJsonReader, notAccepted } from "./compile-json-reader.ts";
import { toInvalidInputError } from "./format-zod-error.ts";
import { parseTraceBatch } from "./parse-trace-batch.ts";
import { TraceBatch } from "./schema.ts";

const readTraceBatch = compileJsonReader(TraceBatch);

/** mulberry32: a small seeded generator, so a failing case can be replayed from its seed. */
function randomSource(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)];
  const chance = (p: number) => next() < p;
  return { int, pick, chance };
}
type Random = ReturnType<typeof randomSource>;

const idAlphabet = "ABCxyz0189._:-";
const textPieces = ["a", "Z", " ", "é", "日本", "😀", '"', "\\", "\n", "\u0000", "{", "null"];
const boundaryLengths = [0, 1, 64, 128, 129, 256, 257, 512, 513];

function text(r: Random, maxLength = 24): string {
  if (r.chance(0.1)) return "x".repeat(r.pick(boundaryLengths));
  let s = "";
  const length = r.int(0, maxLength);
  while (s.length < length) s += r.pick(textPieces);
  return s;
}

function recordId(r: Random): string {
  if (r.chance(0.05)) return "i".repeat(128);
  let s = "";
  for (let i = r.int(1, 12); i > 0; i--) s += r.pick([...idAlphabet]);
  return s;
}

const validTimestamps = [
  "2026-01-31T12:00:00Z",
  "2026-01-31T12:00Z",
  "2024-02-29T23:59:59.999999Z",
  "2000-02-29T00:00:00+05:30",
  "1999-12-31T23:59:59.5-0800",
  "0001-01-01T00:00:00.0+00:00",
  "0001-01-01T00:30:00+00:30",
  "0050-06-15T12:00:00Z",
  "9999-12-31T23:59:59Z",
  "9999-12-31T23:59:59.9999999-00:00",
  "2026-01-31T12:00:00-12:00",
  "2026-01-31T12:00:00+14:00",
];
const invalidTimestamps = [
  "2026-01-31T12:00:00",
  "2026-01-31",
  "2023-02-29T00:00:00Z",
  "2026-01-31T24:00:00Z",
  "2026-01-31 12:00:00Z",
  "2026-01-31T12:00:00.Z",
  "2026-01-31T12:00:00+05",
  "2026-01-31T12:00:00z",
  "1900-02-29T00:00:00Z",
  "0000-01-01T00:00:00.0+00:00",
  "0001-01-01T00:00:00+01:00",
  "9999-12-31T23:00:00-05:00",
  "2026-01-31T12:00:00+25:00",
  "2026-01-31T12:00:00-14:30",
  "",
];

function jsonValue(r: Random, depth = 0): unknown {
  const kind = r.int(0, depth > 2 ? 3 : 5);
  if (kind === 0) return null;
  if (kind === 1) return r.chance(0.5);
  if (kind === 2) return r.pick([0, -0, 1, -1, 1.5, 1e21, Number.MAX_SAFE_INTEGER + 2]);
  if (kind === 3) return text(r);
  if (kind === 4) return Array.from({ length: r.int(0, 3) }, () => jsonValue(r, depth + 1));
  return jsonObject(r, depth + 1);
}

function jsonObject(r: Random, depth = 0): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (let i = r.int(0, 3); i > 0; i--)
    object[r.pick(["a", "b", "role", "0", "type", text(r, 4)])] = jsonValue(r, depth);
  return object;
}

/** Sets the keys whose value is not undefined, in random order (the reader must still output zod's key order). */
function shuffledObject(r: Random, entries: [string, unknown][]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  const present = entries.filter(([, value]) => value !== undefined);
  if (r.chance(0.3)) present.reverse();
  for (const [key, value] of present) object[key] = value;
  if (r.chance(0.2)) object[`extra_${r.int(0, 9)}`] = jsonValue(r);
  return object;
}

const maybe = <T>(r: Random, make: () => T, p = 0.5): T | undefined => (r.chance(p) ? make() : undefined);

function chatMessage(r: Random): Record<string, unknown> {
  const content = r.pick([
    () => text(r),
    () => null,
    () => undefined,
    () =>
      Array.from({ length: r.int(0, 2) }, () =>
        r.chance(0.5)
          ? { type: "text", text: text(r) }
          : { type: "image_url", image_url: { url: "https://example.com/a.png" } },
      ),
  ])();
  return shuffledObject(r, [
    ["role", r.pick(["system", "developer", "user", "assistant", "tool", "function"])],
    ["content", content],
    ["tool_call_id", maybe(r, () => recordId(r), 0.2)],
    ["name", maybe(r, () => text(r), 0.2)],
  ]);
}

function toolCall(r: Random): Record<string, unknown> {
  return shuffledObject(r, [
    ["id", maybe(r, () => `call_${recordId(r)}`)],
    ["type", maybe(r, () => "function")],
    [
      "function",
      shuffledObject(r, [
        ["name", text(r, 8)],
        ["arguments", JSON.stringify(jsonObject(r))],
      ]),
    ],
    ["index", maybe(r, () => r.int(0, 3), 0.2)],
  ]);
}

function llmCall(r: Random): Record<string, unknown> {
  const count = () => maybe(r, () => r.int(0, 5000));
  return shuffledObject(r, [
    ["modelRequested", maybe(r, () => text(r, 8))],
    ["modelServed", maybe(r, () => text(r, 8))],
    ["modelVersion", maybe(r, () => recordId(r))],
    ["messages", maybe(r, () => Array.from({ length: r.int(0, 3) }, () => chatMessage(r)), 0.8)],
    ["tools", maybe(r, () => [{ type: "function", function: { name: "f", parameters: jsonObject(r) } }])],
    ["params", maybe(r, () => ({ temperature: 0.2, max_tokens: 128, ...jsonObject(r) }))],
    [
      "output",
      maybe(r, () =>
        shuffledObject(r, [
          ["content", r.pick([text(r), null, undefined])],
          ["toolCalls", maybe(r, () => Array.from({ length: r.int(0, 2) }, () => toolCall(r)))],
        ]),
      ),
    ],
    ["finishReason", maybe(r, () => r.pick(["stop", "tool_calls", "length"]))],
    [
      "usage",
      maybe(r, () =>
        shuffledObject(r, [
          ["promptTokens", count()],
          ["completionTokens", count()],
          ["totalTokens", count()],
        ]),
      ),
    ],
  ]);
}

function step(r: Random): Record<string, unknown> {
  const kind = r.pick(["llm", "tool", "retrieval", "custom"]);
  return shuffledObject(r, [
    ["id", recordId(r)],
    ["kind", kind],
    ["name", maybe(r, () => text(r))],
    ["parentId", maybe(r, () => recordId(r), 0.3)],
    ["startedAt", r.pick(validTimestamps)],
    ["endedAt", maybe(r, () => r.pick(validTimestamps))],
    ["latencyMs", maybe(r, () => r.pick([0, 12, 120.5, 1e9]))],
    ["llm", kind === "llm" || r.chance(0.1) ? llmCall(r) : undefined],
    ["input", maybe(r, () => jsonValue(r))],
    ["output", maybe(r, () => jsonValue(r))],
    [
      "error",
      maybe(
        r,
        () =>
          shuffledObject(r, [
            ["message", text(r)],
            ["type", maybe(r, () => text(r, 8))],
            ["code", maybe(r, () => r.pick(["rate_limited", 429, 1.5]))],
            ["status", maybe(r, () => r.pick([400, 500]))],
          ]),
        0.2,
      ),
    ],
    ["metadata", maybe(r, () => jsonObject(r), 0.3)],
  ]);
}

function trace(r: Random): Record<string, unknown> {
  return shuffledObject(r, [
    ["id", recordId(r)],
    ["name", maybe(r, () => text(r))],
    ["startedAt", r.pick(validTimestamps)],
    ["endedAt", maybe(r, () => r.pick(validTimestamps))],
    ["userId", maybe(r, () => text(r))],
    ["sessionId", maybe(r, () => text(r))],
    ["env", maybe(r, () => r.pick(["toolcall", "qa", text(r)]))],
    ["status", maybe(r, () => r.pick(["ok", "error", "unknown"]))],
    ["input", maybe(r, () => jsonValue(r))],
    ["output", maybe(r, () => jsonValue(r))],
    ["tags", maybe(r, () => Array.from({ length: r.pick([0, 1, 3, 64, 65]) }, () => text(r, 6)))],
    ["metadata", maybe(r, () => jsonObject(r), 0.3)],
    ["steps", maybe(r, () => Array.from({ length: r.int(0, 4) }, () => step(r)), 0.9)],
  ]);
}

function batch(r: Random): Record<string, unknown> {
  return { traces: Array.from({ length: r.int(1, 3) }, () => trace(r)) };
}

/** Every object and array inside `value`, with the key or index that leads to each of their children. */
function containers(value: unknown, found: (Record<string, unknown> | unknown[])[] = []) {
  if (typeof value !== "object" || value === null) return found;
  found.push(value as Record<string, unknown>);
  for (const child of Object.values(value)) containers(child, found);
  return found;
}

const replacements = (r: Random): unknown[] => [
  undefined,
  null,
  true,
  0,
  -1,
  1.5,
  Number.POSITIVE_INFINITY,
  Number.NaN,
  "",
  "x",
  "bad id!",
  "é",
  "a\u0000b",
  "x".repeat(r.pick(boundaryLengths)),
  r.pick(validTimestamps),
  r.pick(invalidTimestamps),
  r.pick(["ok", "OK", "llm", "LLM", "user", "robot", "function"]),
  [],
  [null],
  {},
  { type: 1 },
  jsonValue(r),
];

/** A random change somewhere in a valid batch: a key removed, a value replaced, a key added, an element added. */
function mutate(r: Random, value: Record<string, unknown>): void {
  const target = r.pick(containers(value));
  const keys = Object.keys(target);
  const action = r.int(0, 3);
  if (Array.isArray(target)) {
    if (action === 0 || keys.length === 0) target.push(r.pick(replacements(r)));
    else if (action === 1) target.length = 0;
    else target[r.int(0, target.length - 1)] = r.pick(replacements(r));
  } else if (action === 0 && keys.length > 0) {
    delete target[r.pick(keys)];
  } else if (action === 1) {
    // An own `__proto__` key, as JSON.parse makes from `{"__proto__": ...}`.
    Object.defineProperty(target, "__proto__", {
      value: jsonValue(r),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else if (action === 2) {
    target[r.pick(["extra", "id", "type", "content", "0"])] = r.pick(replacements(r));
  } else if (keys.length > 0) {
    target[r.pick(keys)] = r.pick(replacements(r));
  }
}

function preview(value: unknown): string {
  return (JSON.stringify(value) ?? String(value)).slice(0, 600);
}

/** Asserts the compiled reader and parseTraceBatch agree with zod on `value`; returns whether zod accepted it. */
function assertSameAsZod(value: unknown, label: string): boolean {
  const expected = TraceBatch.safeParse(value);
  const actual = readTraceBatch(value);
  assert.equal(
    actual !== notAccepted,
    expected.success,
    `${label}: zod ${expected.success ? "accepts" : "rejects"} it, the compiled reader does not: ${preview(value)}`,
  );
  if (expected.success) {
    assert.deepStrictEqual(actual, expected.data, `${label}: outputs differ for ${preview(value)}`);
    assert.equal(JSON.stringify(actual), JSON.stringify(expected.data), `${label}: key order differs`);
    assert.deepStrictEqual(parseTraceBatch(value), expected.data);
  } else {
    const zodError = toInvalidInputError(expected.error);
    assert.throws(
      () => parseTraceBatch(value),
      (error: unknown) =>
        error instanceof InvalidInputError &&
        error.message === zodError.message &&
        error.field === zodError.field,
      `${label}: parseTraceBatch must fail with zod's message: ${zodError.message}`,
    );
  }
  return expected.success;
}

describe("parseTraceBatch and its compiled reader agree with TraceBatch (zod)", () => {
  it("on 1,500 generated valid batches, also after a JSON round trip", () => {
    for (let seed = 1; seed <= 1500; seed++) {
      const value = batch(randomSource(seed));
      assertSameAsZod(value, `valid seed ${seed}`);
      assertSameAsZod(JSON.parse(JSON.stringify(value)), `valid seed ${seed}, JSON round trip`);
    }
  });

  it("on 6,000 mutated batches (fields removed, wrong types, NUL, oversized values, extra keys, __proto__)", () => {
    let accepted = 0;
    for (let seed = 1; seed <= 6000; seed++) {
      const r = randomSource(seed * 7919);
      const value = batch(r);
      for (let i = r.int(1, 3); i > 0; i--) mutate(r, value);
      if (assertSameAsZod(value, `mutated seed ${seed}`)) accepted++;
    }
    // Both outcomes must be common, or the comparison says little.
    assert.ok(accepted > 600 && accepted < 5400, `${accepted} of 6000 mutated batches accepted`);
  });

  it("on bodies that are not batches, and on the batch size limits", () => {
    const minimal = (i: number) => ({ id: `t${i}`, startedAt: "2026-01-01T00:00:00Z" });
    const bodies: unknown[] = [
      undefined,
      null,
      "traces",
      7,
      [],
      {},
      { traces: [] },
      { traces: {} },
      { traces: [null] },
      { traces: Array.from({ length: 10_000 }, (_, i) => minimal(i)) },
      { traces: Array.from({ length: 10_001 }, (_, i) => minimal(i)) },
    ];
    for (const [i, body] of bodies.entries()) assertSameAsZod(body, `body ${i}`);
  });

  it("on values JSON cannot hold, which the reader leaves to zod", () => {
    class Body {
      traces = [{ id: "t1", startedAt: "2026-01-01T00:00:00Z" }];
    }
    const bodies: unknown[] = [
      new Body(),
      { traces: [{ id: "t1", startedAt: new Date() }] },
      { traces: new Map() },
      { traces: [{ id: "t1", startedAt: "2026-01-01T00:00:00Z", metadata: new Map([["a", 1]]) }] },
      { traces: [{ id: "t1", startedAt: "2026-01-01T00:00:00Z", input: undefined }] },
      Object.assign(Object.create(null), { traces: [{ id: "t1", startedAt: "2026-01-01T00:00:00Z" }] }),
    ];
    for (const [i, body] of bodies.entries()) {
      const expected = TraceBatch.safeParse(body);
      if (expected.success) assert.deepStrictEqual(parseTraceBatch(body), expected.data, `body ${i}`);
      else
        assert.throws(() => parseTraceBatch(body), { message: toInvalidInputError(expected.error).message });
    }
  });

  it("outputs keys in zod's order, fills defaults and strips unknown keys where zod does", () => {
    const body = JSON.parse(
      '{"traces":[{"steps":[{"llm":{"messages":[{"content":"hi","role":"user","__proto__":{"x":1},"name":"n"}],' +
        '"output":{"toolCalls":[{"function":{"arguments":"{}","name":"f","extra":1},"id":"c1"}]}},' +
        '"startedAt":"2026-01-01T00:00:00Z","kind":"llm","id":"s1"}],"startedAt":"2026-01-01T00:00:00Z","id":"t1","x":1}]}',
    );
    const batch = parseTraceBatch(body);
    assert.equal(
      JSON.stringify(batch),
      '{"traces":[{"id":"t1","startedAt":"2026-01-01T00:00:00Z","status":"unknown","steps":[{"id":"s1","kind":"llm",' +
        '"startedAt":"2026-01-01T00:00:00Z","llm":{"messages":[{"role":"user","content":"hi","name":"n"}],' +
        '"output":{"toolCalls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}}}]}]}',
    );
    assert.equal(JSON.stringify(batch), JSON.stringify(TraceBatch.parse(body)));
  });

  it("names the offending field the way zod does", () => {
    const body = {
      traces: [
        { id: "t1", startedAt: "2026-01-01T00:00:00Z" },
        { id: "t2", startedAt: "yesterday" },
      ],
    };
    assert.throws(() => parseTraceBatch(body), {
      name: "InvalidInputError",
      message: "invalid input: traces.1.startedAt: must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z",
      field: "traces.1.startedAt",
    });
  });
});

describe("a trace's timestamps", () => {
  it("are taken only where both stores read them back as a date-time ingest takes: years 0001-9999, in UTC too", () => {
    const at = (startedAt: string) => ({ traces: [{ id: "t1", startedAt }] });
    for (const startedAt of validTimestamps) {
      assert.equal(parseTraceBatch(at(startedAt)).traces[0].startedAt, startedAt);
    }
    for (const startedAt of invalidTimestamps) {
      assert.throws(() => parseTraceBatch(at(startedAt)), { field: "traces.0.startedAt" }, startedAt);
    }
    assert.throws(() => parseTraceBatch(at("0001-01-01T00:00:00+01:00")), {
      message: /traces\.0\.startedAt: must be a date-time in the years 0001-9999 \(in UTC as well\)/,
    });
  });
});
