/**
 * Hostile input, property-based: every POST and PUT route of `arc serve` (OTLP and the gateway included) gets valid
 * bodies mutated with hostile values, raw non-JSON bodies, wrong content types and hostile path parameters, on PGlite
 * and on PostgreSQL. Each case must be answered below 500 within a deadline, leave `/health` answering and no
 * prototype polluted, write nothing when refused, and store the whole batch when accepted (on OTLP: every span it
 * does not report rejected). The server runs in a child process (a case that wedges or pollutes it cannot stop the
 * runner; it is restarted). Seeded and bounded in time; ARC_FUZZ_SEED, ARC_FUZZ_BUDGET_MS (per database) and
 * ARC_FUZZ_RUNS (per route) widen a run, ARC_FUZZ_KEEP_GOING=1 lists every kind of failure instead of the first.
 */
import assert from "node:assert/strict";
import { type ChildProcess, fork } from "node:child_process";
import { type IncomingHttpHeaders, request } from "node:http";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { SUPPORT_FAMILY_SPEC } from "../families/__fixtures__/support-family.ts";
import { openPostgresDatabase } from "../store/postgres-database.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import type {
  HostileServerIds,
  HostileServerReady,
  HostileServerState,
} from "./__fixtures__/hostile-input-server.ts";

const SEED = Number(process.env.ARC_FUZZ_SEED ?? 29);
/** Cases per route: the same seed gives the same cases, so a run is repeatable unless the time cap cuts it short. */
const RUNS = Number(process.env.ARC_FUZZ_RUNS ?? 60);
/** A cap on the time per database, shared out by route weight, for slow machines. */
const BUDGET_MS = Number(process.env.ARC_FUZZ_BUDGET_MS ?? 30_000);
const KEEP_GOING = process.env.ARC_FUZZ_KEEP_GOING === "1";
/** A case not answered within this is a hang. */
const ANSWER_MS = 10_000;
const HEALTH_MS = 5_000;
/** The fixture server's body limit. */
const MAX_BODY_BYTES = 1024 * 1024;
/** Time a route's first failure may still be shrunk in, past the route's budget. */
const SHRINK_MS = 3_000;
/** Restarts of a wedged server per database before the remaining routes give up. */
const MAX_RESTARTS = 3;

// ---------------------------------------------------------------------------------------------------------------
// Hostile values

/** A JSON fragment spliced into the body as written (so it can be what JSON.stringify cannot make), shown by label. */
class Raw {
  constructor(
    readonly label: string,
    readonly json: string,
  ) {}
  [fc.toStringMethod](): string {
    return this.label;
  }
}
const raw = (label: string, json: string) => new Raw(label, json);
const str = (label: string, s: string) => new Raw(label, JSON.stringify(s));
const long = (n: number, ch = "x") => str(`"${ch}"×${n}`, ch.repeat(n));
const deepObject = (depth: number) =>
  raw(`{"a":…} nested ${depth} deep`, '{"a":'.repeat(depth) + "1" + "}".repeat(depth));
const deepArray = (depth: number) => raw(`[…] nested ${depth} deep`, "[".repeat(depth) + "]".repeat(depth));
const many = (label: string, item: string, n: number) =>
  raw(`[${label}]×${n}`, `[${new Array(n).fill(item).join(",")}]`);

const STRINGS: Raw[] = [
  str("lone high surrogate", "\ud800"),
  str("lone low surrogate inside", "a\udfffb"),
  str("reversed surrogate pair", "\udc00\ud800"),
  str("NUL", "\u0000"),
  str("NUL inside", "a\u0000b"),
  long(129),
  long(257),
  long(300),
  long(513),
  long(1001),
  long(10_000),
  long(150_000),
  long(60_000, "é"),
  long(40_000, "😀"),
  str("emoji", "😀"),
  str("right-to-left override", "\u202eevil"),
  str("combining accent", "e\u0301"),
  str("BOM", "\ufeff"),
  str("U+FFFF", "\uffff"),
  str("CJK", "中文テスト"),
  str("line separators", "\u2028\u2029"),
  str("control characters", "\u0001\u001f\u007f"),
  str("__proto__", "__proto__"),
  str("constructor", "constructor"),
  str("prototype", "prototype"),
  str("toString", "toString"),
  str("SQL", "' OR '1'='1"),
  str("template", "{{7*7}} #{7*7}"),
  str("path traversal", "../../../../etc/passwd"),
  str("absolute path", "/etc/passwd"),
  str("format string", "%00%s%n"),
  str("backslash", "\\"),
  str("quote", '"'),
  str("html", "<script>alert(1)</script>"),
  str("empty", ""),
  str("spaces", "   "),
  str("NaN", "NaN"),
  str("-1", "-1"),
  str("null as text", "null"),
];
const DATES: Raw[] = [
  "0000-01-01T00:00:00Z",
  "0000-12-31T23:59:59Z",
  "99999-01-01T00:00:00Z",
  "+099999-01-01T00:00:00Z",
  "-000001-01-01T00:00:00Z",
  "0001-01-01T00:00:00Z",
  "9999-12-31T23:59:59.999Z",
  "2026-05-01T10:00:00+25:00",
  "2026-05-01T10:00:00-99:59",
  "2026-05-01T10:00:00+14:01",
  "2026-02-30T00:00:00Z",
  "2026-05-01T24:00:00Z",
  "2026-05-01T10:00:60Z",
  "1969-12-31T23:59:59.999999999Z",
  "2026-05-01",
  "2026-05-01T10:00:00",
].map((d) => str(d, d));
const NUMBERS: Raw[] = [
  raw("2^31-1", "2147483647"),
  raw("2^31", "2147483648"),
  raw("3e9", "3000000000"),
  raw("-2^31-1", "-2147483649"),
  raw("2^53+1", "9007199254740993"),
  raw("2^64", "18446744073709551616"),
  raw("1e300", "1e300"),
  raw("-1e300", "-1e300"),
  raw("1e-300", "1e-300"),
  raw("1e400 (Infinity once parsed)", "1e400"),
  raw("-1e400", "-1e400"),
  raw("-0", "-0"),
  raw("0.5", "0.5"),
  raw("-1", "-1"),
  raw("0", "0"),
  raw("30 digits", "123456789012345678901234567890"),
];
/** For strings that carry numbers (OTLP nanoseconds and int64 values). */
const NUMERIC_STRINGS: Raw[] = [
  "abc",
  "",
  "-1",
  "1.5",
  "1e21",
  "0x10",
  " 12",
  "99999999999999999999999999",
  "9223372036854775808",
  "-9223372036854775809",
  "NaN",
  "\ud800",
].map((s) => str(JSON.stringify(s), s));
const STRUCTURES: Raw[] = [
  raw("null", "null"),
  raw("{}", "{}"),
  raw("[]", "[]"),
  raw("[null]", "[null]"),
  raw('{"":null}', '{"":null}'),
  raw("[[]]", "[[]]"),
  raw("true", "true"),
  raw("0", "0"),
  raw('"text"', '"text"'),
  deepObject(100),
  deepObject(1000),
  deepObject(2500),
  deepObject(6000),
  deepObject(20_000),
  deepArray(1000),
  deepArray(2500),
  deepArray(6000),
  deepArray(20_000),
  many("0", "0", 50_000),
  many('""', '""', 20_000),
  many("null", "null", 20_000),
  many("{}", "{}", 10_000),
  raw("object of 10000 keys", `{${Array.from({ length: 10_000 }, (_, i) => `"k${i}":0`).join(",")}}`),
  raw('{"__proto__":{"polluted":"yes"}}', '{"__proto__":{"polluted":"yes"}}'),
  raw('{"constructor":{"prototype":{"polluted":"yes"}}}', '{"constructor":{"prototype":{"polluted":"yes"}}}'),
  raw('{"prototype":{"polluted":"yes"}}', '{"prototype":{"polluted":"yes"}}'),
  raw('["\\ud800"]', '["\\ud800"]'),
  raw('{"\\ud800":1}', '{"\\ud800":1}'),
  raw("duplicate keys", '{"a":1,"a":2}'),
];
const ANY: Raw[] = [
  ...STRINGS,
  ...DATES,
  ...NUMBERS,
  ...NUMERIC_STRINGS,
  ...STRUCTURES,
  raw("false", "false"),
];
const KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "\u0000",
  "\ud800",
  "",
  "x".repeat(300),
  "a.b",
  "$where",
  "toString",
  "😀",
  "polluted",
  "__defineGetter__",
];

/** Hostile values fitting what a field holds now: dates for dates, numbers for numbers, structures for structures. */
function poolFor(current: unknown): Raw[] {
  if (typeof current === "string") {
    if (/^\d{4}-\d\d-\d\dT/.test(current)) return [...DATES, ...STRINGS];
    if (/^\d+$/.test(current)) return [...NUMERIC_STRINGS, ...STRINGS];
    return STRINGS;
  }
  if (typeof current === "number") return NUMBERS;
  if (current !== null && typeof current === "object" && !(current instanceof Raw)) return STRUCTURES;
  return ANY;
}

/** Whole bodies that are not the JSON a route expects. */
const RAW_BODIES: { label: string; bytes: Uint8Array }[] = [
  ["empty body", ""],
  ["{", "{"],
  ["not json", "not json"],
  ["null", "null"],
  ["[]", "[]"],
  ["truncated array", "[1,2"],
  ["a JSON string", '"just a string"'],
  ["1e400", "1e400"],
  ["trailing garbage", '{"a":1} trailing'],
  ["BOM then {}", "\ufeff{}"],
  ["raw NUL byte in a string", '{"a":"\u0000"}'],
  ["array nested 100000 deep", "[".repeat(100_000) + "]".repeat(100_000)],
  ["object nested 50000 deep", '{"a":'.repeat(50_000) + "1" + "}".repeat(50_000)],
  ["1.5 MB string (over the body limit)", `"${"x".repeat(1_500_000)}"`],
]
  .map(([label, text]) => ({ label, bytes: new TextEncoder().encode(text) }))
  .concat([
    {
      label: "invalid UTF-8",
      bytes: Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    },
    { label: "overlong UTF-8 NUL", bytes: Uint8Array.from([0x22, 0xc0, 0x80, 0x22]) },
    { label: "UTF-16LE JSON", bytes: new Uint8Array(Buffer.from('{"a":1}', "utf16le")) },
  ]);
const CONTENT_TYPES: (string | null)[] = [
  "application/json",
  null,
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/x-protobuf",
  "application/json; charset=utf-16",
  "application/vnd.api+json",
  "APPLICATION/JSON",
  "application/jsonp",
  "*/*",
];
/** Path parameters, already percent-encoded. */
const SEGMENTS = [
  "%00",
  "a%00b",
  "%ED%A0%80",
  "%F0%9F%98%80",
  "%FF",
  "__proto__",
  "constructor",
  "prototype",
  "..",
  "..%2F..%2Fetc%2Fpasswd",
  "x".repeat(300),
  "x".repeat(3000),
  "%20",
  "%25",
  "mv_ffffffffffff",
  "null",
  "-1",
  "99999999999999999999",
];
const GATEWAY_HEADERS = [
  "x-arc-session",
  "x-arc-user",
  "x-arc-env",
  "x-arc-pattern",
  "x-arc-trace-id",
  "x-arc-step-id",
  "x-arc-parent-step-id",
];
const HEADER_VALUES = [
  "x".repeat(300),
  "x".repeat(5000),
  "\u00ff\u00fe",
  "../..",
  "fixture-trace",
  "fixture-step",
  "a b",
  "__proto__",
  "",
  "toolcall",
];

// ---------------------------------------------------------------------------------------------------------------
// Cases

/** One change to a valid body: `at` picks the place, `pick` the value or key, `from` the pool it comes from. */
interface Mutation {
  op: "set" | "key" | "drop" | "repeat";
  at: number;
  pick: number;
  from: "fitting" | "any" | "dictionary";
}
/** One request: a valid body (`variant`) mutated or replaced by a raw body, its content type, parameters, headers. */
interface Case {
  variant: number;
  params: ({ valid: number } | { hostile: number })[];
  body: { mutations: Mutation[] } | { raw: number };
  contentType: number;
  headers: { name: number; value: number }[];
}

const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom<Mutation["op"][]>("set", "set", "set", "key", "drop", "repeat"),
  at: fc.nat(),
  pick: fc.nat(),
  from: fc.constantFrom<Mutation["from"][]>("fitting", "fitting", "any", "dictionary", "dictionary"),
});

function caseArb(route: RouteSpec): fc.Arbitrary<Case> {
  const param = fc.oneof(
    { weight: 3, arbitrary: fc.record({ valid: fc.nat() }) },
    { weight: 2, arbitrary: fc.record({ hostile: fc.nat(SEGMENTS.length - 1) }) },
  );
  return fc.record({
    variant: fc.nat(),
    params: fc.tuple(...(route.params ?? []).map(() => param)),
    body: fc.oneof(
      {
        weight: 16,
        arbitrary: fc.record({ mutations: fc.array(mutationArb, { minLength: 1, maxLength: 3 }) }),
      },
      { weight: 1, arbitrary: fc.record({ mutations: fc.constant([]) }) },
      { weight: 2, arbitrary: fc.record({ raw: fc.nat(RAW_BODIES.length - 1) }) },
    ),
    contentType: fc.oneof(
      { weight: 9, arbitrary: fc.constant(0) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: CONTENT_TYPES.length - 1 }) },
    ),
    headers: route.gateway
      ? fc.array(
          fc.record({ name: fc.nat(GATEWAY_HEADERS.length - 1), value: fc.nat(HEADER_VALUES.length - 1) }),
          { maxLength: 2 },
        )
      : fc.constant([]),
  }) as fc.Arbitrary<Case>;
}

type Path = (string | number)[];
const showPath = (path: Path) => (path.length ? path.join(".") : "(body)");
const preview = (value: unknown) =>
  value instanceof Raw ? value.label : (JSON.stringify(value) ?? String(value)).slice(0, 80);

/** Every place in a body, the body itself first (of a long array, its first 50 items); spliced values are leaves. */
function places(value: unknown, path: Path = [], out: { path: Path; value: unknown }[] = []) {
  out.push({ path, value });
  if (value instanceof Raw || value === null || typeof value !== "object") return out;
  for (const [k, v] of Object.entries(value).slice(0, Array.isArray(value) ? 50 : undefined)) {
    places(v, [...path, Array.isArray(value) ? Number(k) : k], out);
  }
  return out;
}

function at(root: unknown, path: Path): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], root);
}

/** Applies one mutation; returns the new body and what it did, in words. */
function mutate(body: unknown, m: Mutation, dictionary: Raw[]): { body: unknown; did: string } {
  const all = places(body);
  const choose = (pool: Raw[]) => pool[m.pick % pool.length];
  const valueFor = (current: unknown) =>
    m.from === "dictionary" && dictionary.length
      ? choose(dictionary)
      : m.from === "any"
        ? choose(ANY)
        : choose(poolFor(current));
  if (m.op === "set") {
    const { path, value } = all[m.at % all.length];
    const next = valueFor(value);
    if (path.length === 0) return { body: next, did: `body = ${next.label}` };
    (at(body, path.slice(0, -1)) as Record<string | number, unknown>)[path.at(-1) as string] = next;
    return { body, did: `${showPath(path)} = ${next.label}` };
  }
  if (m.op === "key") {
    const objects = all.filter(
      (p) =>
        p.value !== null &&
        typeof p.value === "object" &&
        !Array.isArray(p.value) &&
        !(p.value instanceof Raw),
    );
    if (objects.length === 0) return { body, did: "no object to add a key to" };
    const { path, value } = objects[m.at % objects.length];
    const key = KEYS[m.pick % KEYS.length];
    const next = m.from === "dictionary" && dictionary.length ? choose(dictionary) : choose(STRUCTURES);
    Object.defineProperty(value, key, { value: next, enumerable: true, configurable: true, writable: true });
    return { body, did: `${showPath(path)}[${JSON.stringify(key).slice(0, 40)}] = ${next.label}` };
  }
  const inner = all.filter((p) => p.path.length > 0);
  if (m.op === "drop") {
    if (inner.length === 0) return { body, did: "nothing to drop" };
    const { path } = inner[m.at % inner.length];
    const parent = at(body, path.slice(0, -1)) as Record<string | number, unknown>;
    if (Array.isArray(parent)) parent.splice(path.at(-1) as number, 1);
    else delete parent[path.at(-1) as string];
    return { body, did: `drop ${showPath(path)}` };
  }
  const arrays = all.filter((p) => Array.isArray(p.value) && (p.value as unknown[]).length > 0);
  if (arrays.length === 0) return { body, did: "no array to repeat" };
  const { path, value } = arrays[m.at % arrays.length];
  const items = value as unknown[];
  const times = Math.max(2, Math.min([2, 50, 1000][m.pick % 3], Math.floor(5000 / items.length)));
  const n = items.length;
  for (let i = n; i < n * times; i++) items.push(items[i % n]);
  return { body, did: `${showPath(path)} repeated ×${times} (${items.length} items)` };
}

/** JSON text of a body with its spliced values written as they are. */
function serialize(body: unknown): string {
  const spliced: Raw[] = [];
  const text = JSON.stringify(body, (_key, value) =>
    value instanceof Raw ? `\u0000raw${spliced.push(value) - 1}\u0000` : value,
  );
  return text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_match, i: string) => spliced[Number(i)].json);
}

// ---------------------------------------------------------------------------------------------------------------
// The routes

/** What a route's valid bodies and checks see. */
interface Ctx {
  ready: HostileServerReady;
  ids: HostileServerIds;
  /** Unique per case: ids made from it never collide with an earlier case's. */
  uid: number;
}
type Json = Record<string, unknown>;
/** One POST or PUT route: its valid bodies, existing values for its parameters, and what must hold once it accepts. */
interface RouteSpec {
  method: "POST" | "PUT";
  path: string;
  admin?: boolean;
  /** Its share of the time budget, relative to 1 (ingest routes get more: their cases cost more and matter most). */
  weight?: number;
  /** Valid bodies; `undefined` is a request with no body. */
  bodies: ((x: Ctx) => unknown)[];
  /** Values that exist, for each path parameter in order. */
  params?: ((x: Ctx) => string[])[];
  /** Values that matter to this route, tried at any place by two mutations in five. */
  dictionary?: Raw[];
  gateway?: boolean;
  /** Traces (or their feedback) arrive: a detection pass runs after an accepted case. */
  ingest?: boolean;
  /** Problems with an accepted case: what it answered against what was stored. */
  accepted?: (
    x: Ctx,
    sent: unknown,
    answer: Json,
    delta: Record<string, number>,
    server: FuzzedServer,
  ) => Promise<string[]>;
  /** Reads that must still answer below 500 after an accepted case (`must: 200` where the thing must exist). */
  readBack?: (x: Ctx, sent: unknown, answer: Json, params: string[]) => { path: string; must?: number }[];
}

const hex = (uid: number, n: number, bytes: number) =>
  (uid.toString(16) + n.toString(16).padStart(4, "0")).padStart(bytes * 2, "0");
const attr = (key: string, value: Json) => ({ key, value });
const started = "2026-05-01T10:00:00Z";

function trace(id: string) {
  return {
    id,
    name: "lookup-order",
    startedAt: started,
    endedAt: "2026-05-01T10:00:02.500Z",
    userId: "u-1",
    sessionId: "s-1",
    env: "toolcall",
    status: "ok",
    input: "where is order 12?",
    output: { answer: "It shipped." },
    tags: ["prod"],
    metadata: { region: "eu", attempt: 1 },
    steps: [
      {
        id: `${id}-llm`,
        kind: "llm",
        name: "chat",
        startedAt: started,
        endedAt: "2026-05-01T10:00:01.200Z",
        latencyMs: 1200,
        llm: {
          modelRequested: "arc-small",
          modelServed: "arc-small-v2",
          messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "where is order 12?" },
          ],
          tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
          params: { temperature: 0, seed: 7, max_tokens: 64 },
          output: {
            content: null,
            toolCalls: [
              { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"order":12}' } },
            ],
          },
          finishReason: "tool_calls",
          usage: { promptTokens: 31, completionTokens: 9, totalTokens: 40 },
        },
      },
      {
        id: `${id}-tool`,
        kind: "tool",
        name: "lookup",
        parentId: `${id}-llm`,
        startedAt: "2026-05-01T10:00:01.300Z",
        input: { order: 12 },
        output: { status: "shipped" },
        error: { message: "slow", type: "timeout", code: 504, status: 504 },
        metadata: { cached: false },
      },
    ],
  };
}

function otlpExport(uid: number) {
  const traceId = hex(uid, 0, 16);
  const span = (n: number) => hex(uid, n, 8);
  const nanos = (ms: number) => `${BigInt(Date.parse(started) + ms) * 1_000_000n}`;
  return {
    resourceSpans: [
      {
        resource: { attributes: [attr("service.name", { stringValue: "travel-agent" })] },
        scopeSpans: [
          {
            scope: { name: "agent", version: "1.0.0" },
            spans: [
              {
                traceId,
                spanId: span(1),
                name: "invoke_agent travel",
                kind: 1,
                startTimeUnixNano: nanos(0),
                endTimeUnixNano: nanos(3000),
                attributes: [
                  attr("gen_ai.operation.name", { stringValue: "invoke_agent" }),
                  attr("user.id", { stringValue: "u-42" }),
                  attr("gen_ai.conversation.id", { stringValue: "conv-9" }),
                ],
                status: { code: 1 },
              },
              {
                traceId,
                spanId: span(2),
                parentSpanId: span(1),
                name: "chat arc-small",
                kind: 3,
                startTimeUnixNano: nanos(100),
                endTimeUnixNano: nanos(1200),
                attributes: [
                  attr("gen_ai.operation.name", { stringValue: "chat" }),
                  attr("gen_ai.request.model", { stringValue: "arc-small" }),
                  attr("gen_ai.response.model", { stringValue: "arc-small-v2" }),
                  attr("gen_ai.request.temperature", { doubleValue: 0.3 }),
                  attr("gen_ai.request.max_tokens", { intValue: "128" }),
                  attr("gen_ai.usage.input_tokens", { intValue: 31 }),
                  attr("gen_ai.usage.output_tokens", { intValue: "9" }),
                  attr("gen_ai.response.finish_reasons", {
                    arrayValue: { values: [{ stringValue: "stop" }] },
                  }),
                  attr("gen_ai.input.messages", {
                    stringValue: JSON.stringify([
                      { role: "user", parts: [{ type: "text", content: "Weather in Oslo?" }] },
                    ]),
                  }),
                  attr("gen_ai.output.messages", {
                    stringValue: JSON.stringify([
                      {
                        role: "assistant",
                        parts: [{ type: "text", content: "Cold." }],
                        finish_reason: "stop",
                      },
                    ]),
                  }),
                ],
                status: { code: 0 },
              },
              {
                traceId,
                spanId: span(3),
                parentSpanId: span(1),
                name: "execute_tool get_weather",
                kind: 1,
                startTimeUnixNano: nanos(1300),
                endTimeUnixNano: nanos(1400),
                attributes: [
                  attr("gen_ai.operation.name", { stringValue: "execute_tool" }),
                  attr("gen_ai.tool.name", { stringValue: "get_weather" }),
                  attr("gen_ai.tool.call.arguments", { stringValue: '{"city":"Oslo"}' }),
                  attr("gen_ai.tool.call.result", { stringValue: '{"temp":3}' }),
                  attr("retry", { boolValue: false }),
                  attr("labels", { kvlistValue: { values: [attr("raw", { bytesValue: "AAEC" })] } }),
                ],
                status: { code: 2, message: "tool failed" },
              },
            ],
          },
        ],
      },
    ],
  };
}

/** OTLP's ids as the product reads them: hex, or base64 of the right length. */
function otlpId(id: unknown, bytes: number): string | null {
  if (typeof id !== "string" || !id) return null;
  if (new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(id)) return id.toLowerCase();
  const decoded = Buffer.from(id, "base64");
  return decoded.length === bytes ? decoded.toString("hex") : null;
}

/** The spans of an export reachable through well-formed containers. */
function otlpSpans(sent: unknown): unknown[] {
  const list = (v: unknown, key: string) =>
    v !== null && typeof v === "object" && Array.isArray((v as Json)[key])
      ? ((v as Json)[key] as unknown[])
      : [];
  return list(sent, "resourceSpans").flatMap((r) => list(r, "scopeSpans").flatMap((s) => list(s, "spans")));
}

const idsOf = (sent: unknown, key: string): string[] => {
  const items = (sent as Json | null)?.[key];
  return Array.isArray(items)
    ? items.map((t) => (t as Json | null)?.id).filter((id): id is string => typeof id === "string")
    : [];
};
const enc = encodeURIComponent;
const modelIds = (x: Ctx) => [...x.ids.models.map((m) => m.id), "cand", "prod"];

/** Every POST and PUT route `arc serve` registers; the first test fails when the server has one not listed here. */
const ROUTES: RouteSpec[] = [
  {
    method: "POST",
    path: "/v1/traces",
    weight: 3,
    ingest: true,
    bodies: [(x) => ({ traces: [trace(`t-${x.uid}-a`), trace(`t-${x.uid}-b`)] })],
    async accepted(_x, sent, answer, delta) {
      const inserted = answer.inserted as { traces?: number; steps?: number } | undefined;
      const problems = [];
      if ((delta.traces ?? 0) !== inserted?.traces || (delta.steps ?? 0) !== inserted?.steps) {
        problems.push(
          `answered inserted ${JSON.stringify(inserted)} but stored ${delta.traces ?? 0} traces and ${delta.steps ?? 0} steps`,
        );
      }
      const sentCount = Array.isArray((sent as Json | null)?.traces)
        ? ((sent as Json).traces as unknown[]).length
        : 0;
      const received = (answer.received as { traces?: number } | undefined)?.traces;
      if (received !== sentCount) problems.push(`sent ${sentCount} traces, answered received ${received}`);
      return problems;
    },
    readBack: (_x, sent) => [
      ...idsOf(sent, "traces")
        .slice(0, 3)
        .map((id) => ({ path: `/v1/traces/${enc(id)}`, must: 200 })),
      { path: "/v1/traces?limit=5" },
    ],
  },
  {
    method: "POST",
    path: "/v1/feedback",
    weight: 2,
    ingest: true,
    bodies: [
      (x) => [
        {
          id: `f-${x.uid}-a`,
          traceId: x.ready.fixture.traceId,
          score: 0.5,
          label: "thumbs_down",
          comment: "wrong order",
          createdAt: "2026-05-01T10:05:00Z",
        },
        {
          id: `f-${x.uid}-b`,
          traceId: x.ready.fixture.traceId,
          stepId: x.ready.fixture.stepId,
          correction: "It ships on Monday.",
        },
      ],
      (x) => ({ id: `f-${x.uid}`, traceId: x.ready.fixture.traceId, score: -1 }),
    ],
    async accepted(_x, _sent, answer, delta) {
      return (delta.feedback ?? 0) === answer.created
        ? []
        : [`answered created ${answer.created} but stored ${delta.feedback ?? 0} feedback rows`];
    },
    readBack: (x) => [{ path: `/v1/traces/${x.ready.fixture.traceId}`, must: 200 }],
  },
  {
    method: "POST",
    path: "/v1/otlp/v1/traces",
    weight: 3,
    ingest: true,
    bodies: [(x) => otlpExport(x.uid)],
    dictionary: [
      raw("null", "null"),
      raw("{}", "{}"),
      str('"abc"', "abc"),
      long(300),
      str("32 hex digits", "ffffffffffffffffffffffffffffffff"),
      str("base64 of 8 bytes", "AAAAAAAAAAA="),
      raw('{"stringValue":"\\ud800"}', '{"stringValue":"\\ud800"}'),
      raw('{"intValue":"abc"}', '{"intValue":"abc"}'),
      raw('{"intValue":3e9}', '{"intValue":3000000000}'),
      raw('{"doubleValue":1e300}', '{"doubleValue":1e300}'),
      raw('{"arrayValue":{"values":[null]}}', '{"arrayValue":{"values":[null]}}'),
      raw('{"kvlistValue":{"values":[null]}}', '{"kvlistValue":{"values":[null]}}'),
    ],
    async accepted(x, sent, answer, _delta, server) {
      const spans = otlpSpans(sent);
      const keys = new Set<string>();
      let unusable = 0;
      for (const span of spans) {
        const s = span as Json | null;
        const traceId = otlpId(s?.traceId, 16);
        const spanId = otlpId(s?.spanId, 8);
        if (traceId && spanId) keys.add(`${traceId}/${spanId}`);
        else unusable++;
      }
      const pairs = [...keys].map((k) => k.split("/"));
      const [{ n: stored }] = await server.call<{ n: number }[]>("sql", ANSWER_MS, {
        sql: `select count(*)::int as n from steps where tenant_id = $1
                and (trace_id, id) in (select * from unnest($2::text[], $3::text[]))`,
        params: [x.ready.tenant.id, pairs.map((p) => p[0]), pairs.map((p) => p[1])],
      });
      const rejected = Number((answer.partialSuccess as Json | undefined)?.rejectedSpans ?? 0);
      return stored + rejected >= keys.size + unusable
        ? []
        : [
            `of ${spans.length} spans (${keys.size} distinct ids), ${stored} are stored and ${rejected} reported rejected: ${keys.size + unusable - stored - rejected} lost`,
          ];
    },
    readBack: (_x, sent) => [
      ...[...new Set(otlpSpans(sent).map((s) => otlpId((s as Json | null)?.traceId, 16)))]
        .filter((id): id is string => id !== null)
        .slice(0, 3)
        .map((id) => ({ path: `/v1/traces/${id}` })),
    ],
  },
  {
    method: "POST",
    path: "/v1/chat/completions",
    weight: 2,
    gateway: true,
    ingest: true,
    bodies: [false, true].map((stream) => () => ({
      model: "arc",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Where is order 12?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"order":12}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: '{"status":"shipped"}' },
        { role: "user", content: [{ type: "text", text: "And when does it arrive?" }] },
      ],
      temperature: 0,
      max_tokens: 16,
      seed: 7,
      user: "u-1",
      stream,
      ...(stream ? { stream_options: { include_usage: true } } : {}),
    })),
    dictionary: [
      raw("null", "null"),
      long(150_000),
      raw('{"role":"user"}', '{"role":"user"}'),
      raw(
        '{"role":"user","content":[{"type":"image_url"}]}',
        '{"role":"user","content":[{"type":"image_url"}]}',
      ),
      raw('{"role":"\\ud800","content":"hi"}', '{"role":"\\ud800","content":"hi"}'),
      raw("n: 1e300", "1e300"),
    ],
    readBack: () => [{ path: "/v1/traces?limit=5" }, { path: "/v1/models" }],
  },
  {
    method: "PUT",
    path: "/v1/teaching",
    bodies: [
      () => ({
        teacher: "prod",
        mode: "adaptive",
        patterns: ["pat_1"],
        baselineShare: 0.1,
        ndr: {},
        templates: {},
        maxTeacherTokens: 64,
        maxSolutionTokens: 128,
      }),
      () => ({ teacher: "prod", mode: "off" }),
    ],
    readBack: () => [{ path: "/v1/teaching" }],
  },
  {
    method: "POST",
    path: "/v1/teaching/patterns/:id/reset",
    bodies: [() => undefined, () => ({})],
    params: [() => ["pat_1", "pat_does_not_exist"]],
    readBack: () => [{ path: "/v1/teaching" }],
  },
  {
    method: "POST",
    path: "/v1/model-versions",
    bodies: [
      (x) => ({
        name: `m-${x.uid}`,
        artifactDir: `m-${x.uid}`,
        parentId: "prod",
        lineage: { recipe: "toolcall-dpo", datasets: ["ds_1"], steps: 20 },
        metrics: { reward: 0.5, loss: [0.9, 0.5] },
      }),
      (x) => ({ name: `m-${x.uid}`, status: "promoted", artifactDir: `m-${x.uid}` }),
    ],
    readBack: (_x, _sent, answer) => [
      { path: "/v1/model-versions" },
      ...(typeof answer.id === "string" ? [{ path: `/v1/model-versions/${answer.id}`, must: 200 }] : []),
    ],
  },
  {
    method: "POST",
    path: "/v1/eval-sets",
    bodies: [
      (x) => ({
        kind: "eval",
        version: `v-${x.uid}`,
        tenantId: "ignored",
        rows: [
          {
            id: "r1",
            question: "Where is order 12?",
            env: "toolcall",
            solution: { tool: "lookup", args: { order: 12 } },
            meta: { slice: "general", sourceTraceIds: [x.ready.fixture.traceId] },
          },
          { id: "r2", question: "What is 2+2?", env: "arith", solution: 4, meta: { slice: "pat_1" } },
        ],
        createdFrom: { seed: 1, patternIds: ["pat_1"], params: { size: 2 } },
        stats: { rows: 2 },
      }),
    ],
  },
  {
    method: "POST",
    path: "/v1/model-versions/:id/validate",
    bodies: [() => undefined],
    params: [modelIds],
    readBack: (_x, _sent, _answer, [id]) => [
      { path: `/v1/model-versions/${id}` },
      { path: "/v1/model-versions" },
    ],
  },
  {
    method: "POST",
    path: "/v1/model-versions/:id/approve",
    bodies: [() => undefined],
    params: [modelIds],
    readBack: (_x, _sent, _answer, [id]) => [{ path: `/v1/model-versions/${id}` }],
  },
  {
    method: "PUT",
    path: "/v1/release-settings",
    bodies: [
      () => ({
        gates: { minFunctional: 0.8, minNdr: 0.95, alpha: 0.05, safety: "clean", requireApproval: false },
        canary: {
          ramp: [0.1, 0.5, 1],
          minSamplesPerStage: 30,
          minControlSamples: 20,
          minDetectableIncrease: 0.1,
          alpha: 0.05,
          beta: 0.1,
          autoStart: true,
        },
      }),
      () => ({ canary: { ramp: [1] } }),
    ],
    readBack: () => [{ path: "/v1/release-settings" }, { path: "/v1/deployments" }],
  },
  {
    method: "POST",
    path: "/v1/deployments",
    bodies: [
      (x) => ({
        candidate: x.ids.models.find((m) => m.status === "validated")?.id ?? x.ready.fixture.candidate,
      }),
      (x) => ({ candidate: x.ready.fixture.candidate }),
    ],
    readBack: (_x, _sent, answer) => [
      { path: "/v1/deployments" },
      { path: "/v1/models" },
      ...(typeof answer.id === "string" ? [{ path: `/v1/deployments/${answer.id}`, must: 200 }] : []),
    ],
  },
  ...(["promote", "rollback"] as const).map(
    (action): RouteSpec => ({
      method: "POST",
      path: `/v1/deployments/:id/${action}`,
      bodies: [() => ({ reason: "by hand" }), () => undefined],
      params: [(x) => x.ids.deployments],
      readBack: () => [{ path: "/v1/deployments" }, { path: "/v1/models" }],
    }),
  ),
  {
    method: "PUT",
    path: "/v1/task-families/:env",
    bodies: [
      () => structuredClone(SUPPORT_FAMILY_SPEC),
      () => ({ tools: [{ name: "lookup", parameters: { type: "object" } }], verifier: "judge" }),
    ],
    params: [() => ["support", "toolcall"]],
    readBack: () => [{ path: "/v1/task-families" }],
  },
  {
    method: "PUT",
    path: "/v1/judges/rubric",
    bodies: [
      () => ({
        criteria: ["Quote the order id the user gave."],
        classes: [{ name: "wrong_order", description: "names another order", severity: "high" }],
        instructions: "A shop's support agent.",
      }),
    ],
    readBack: () => [{ path: "/v1/judges", must: 200 }],
  },
  {
    // no upstream is allowlisted on this server, so every body is refused: it must be refused cleanly
    method: "PUT",
    path: "/v1/judges/model",
    bodies: [() => ({ upstream: "local", model: "judge-1", callsPerMinute: 10, tokensPerMinute: 5_000 })],
    readBack: () => [{ path: "/v1/judges", must: 200 }],
  },
  {
    method: "POST",
    path: "/v1/judges/test",
    bodies: [(x) => ({ traceId: x.ready.fixture.traceId })],
    readBack: () => [{ path: "/v1/judges", must: 200 }],
  },
  {
    method: "POST",
    path: "/v1/judges/calibrate",
    bodies: [() => ({ limit: 5 })],
    readBack: () => [{ path: "/v1/judges", must: 200 }],
  },
  {
    method: "POST",
    path: "/v1/rewards",
    bodies: [
      () => ({
        kind: "partial",
        items: [
          {
            env: "toolcall",
            question: "Weather in Oslo in celsius?",
            answer: '{"tool":"get_weather","args":{"city":"Oslo","unit":"c"}}',
            solution: { tool: "get_weather", args: { city: "Oslo", unit: "c" } },
          },
        ],
      }),
    ],
    readBack: () => [{ path: "/v1/judges", must: 200 }],
  },
  {
    method: "PUT",
    path: "/v1/detectors",
    bodies: [
      () => ({
        disabled: ["latency_over_budget"],
        latencyBudgetMs: 20_000,
        loopThreshold: 3,
        negativeScoreBelow: 0,
        negativeLabels: ["thumbs_down"],
      }),
    ],
    readBack: () => [{ path: "/v1/detectors" }, { path: "/v1/patterns" }],
  },
  {
    method: "POST",
    path: "/v1/datasets",
    bodies: [
      (x) => ({ kind: "eval", fromPatterns: "all", seed: x.uid, perPattern: 5, generalSize: 5 }),
      (x) => ({
        kind: "prompts",
        size: 8,
        failureSamplingRatio: 0.8,
        failureSampling: "balanced",
        seed: x.uid,
      }),
      (x) => ({
        kind: "preferences",
        fromPatterns: ["pat_1"],
        seed: x.uid,
        candidates: { [x.ready.fixture.traceId]: [{ text: "It ships Monday.", source: "human" }] },
      }),
    ],
    readBack: (_x, _sent, answer) =>
      typeof answer.id === "string"
        ? [
            { path: "/v1/datasets" },
            { path: `/v1/datasets/${answer.id}`, must: 200 },
            { path: `/v1/datasets/${answer.id}/export?format=jsonl` },
          ]
        : [{ path: "/v1/datasets" }],
  },
  {
    method: "PUT",
    path: "/v1/dataset-schedules/:name",
    bodies: [() => ({ everyMs: 3_600_000, request: { kind: "prompts", size: 16 } })],
    params: [(x) => ["nightly", `s-${x.uid}`]],
    readBack: () => [{ path: "/v1/dataset-schedules" }],
  },
  {
    method: "POST",
    path: "/v1/runs",
    bodies: [
      () => ({ recipe: "toolcall-dpo", overrides: ["trainer.steps=2", "trainer.learningRate=0.0001"] }),
      () => ({ overrides: ["trainer.steps=3"] }),
    ],
    dictionary: [
      "__proto__.polluted=1",
      "constructor.prototype.polluted=1",
      "trainer.__proto__.polluted=1",
      "reward.module=/etc/passwd",
      "reward.module=../../../../tmp/x.mjs",
      "trainer.steps=1e300",
      "trainer.steps=-1",
      "trainer.steps=abc",
      "data.env=\ud800",
      `trainer.name=${"x".repeat(10_000)}`,
    ].map((s) => str(JSON.stringify(s).slice(0, 60), s)),
    readBack: (_x, _sent, answer) => [
      { path: "/v1/runs" },
      ...(typeof answer.id === "string" ? [{ path: `/v1/runs/${answer.id}`, must: 200 }] : []),
    ],
  },
  {
    method: "POST",
    path: "/v1/runs/:id/cancel",
    bodies: [() => undefined],
    params: [(x) => x.ids.runs],
    readBack: () => [{ path: "/v1/runs" }],
  },
  {
    method: "POST",
    path: "/v1/admin/tenants",
    admin: true,
    bodies: [(x) => ({ name: `t${x.uid}` })],
    readBack: () => [{ path: "/v1/admin/tenants" }],
  },
  {
    method: "POST",
    path: "/v1/admin/tenants/:tenant/keys",
    admin: true,
    bodies: [() => ({ name: "ci key" }), () => undefined],
    params: [(x) => [x.ready.tenant.name, x.ready.bystander.name, x.ready.tenant.id]],
    readBack: (_x, _sent, _answer, [tenant]) => [{ path: `/v1/admin/tenants/${tenant}/keys` }],
  },
  {
    method: "PUT",
    path: "/v1/analytics/settings",
    bodies: [
      () => ({ prices: { "arc-small": { prompt: 0.5, completion: 1.5 } }, costPerFailure: 2 }),
      () => ({}),
    ],
    readBack: () => [{ path: "/v1/analytics/settings", must: 200 }, { path: "/v1/analytics" }],
  },
  // the dashboard's forms: without its session cookie they sign nobody in and change nothing
  {
    method: "POST",
    path: "/ui/login",
    weight: 0.25,
    bodies: [(x) => ({ key: x.ready.tenant.key }), () => ({ key: "" }), () => undefined],
    readBack: () => [{ path: "/v1/deployments" }],
  },
  { method: "POST", path: "/ui/logout", weight: 0.1, bodies: [() => undefined] },
  {
    method: "POST",
    path: "/ui/tenants/view",
    weight: 0.1,
    bodies: [(x) => ({ tenant: x.ready.tenant.id })],
  },
  ...(["promote", "rollback"] as const).map(
    (action): RouteSpec => ({
      method: "POST",
      path: `/ui/deployments/:id/${action}`,
      weight: 0.25,
      bodies: [() => ({ reason: "by hand" }), () => undefined],
      params: [(x) => x.ids.deployments],
      readBack: () => [{ path: "/v1/deployments" }, { path: "/v1/models" }],
    }),
  ),
];

// ---------------------------------------------------------------------------------------------------------------
// The server under test, in a child process

/** A failure after which the server cannot be trusted: it is restarted and the route's remaining cases skipped. */
class Fatal extends Error {}

/** The fixture server as a child process: IPC calls with deadlines, its stderr kept for diagnosis, restarts. */
class FuzzedServer {
  ready!: HostileServerReady;
  restarts = 0;
  private child: ChildProcess | undefined;
  private log = "";
  private logStart = 0;
  private next = 1;
  private readonly pending = new Map<
    number,
    (reply: { ok: boolean; result?: unknown; error?: string }) => void
  >();

  constructor(private readonly database: string) {}

  async start(): Promise<void> {
    const child = fork(
      fileURLToPath(new URL("./__fixtures__/hostile-input-server.ts", import.meta.url)),
      [this.database],
      { execArgv: ["--import", "tsx"], stdio: ["ignore", "ignore", "pipe", "ipc"] },
    );
    this.child = child;
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.log += chunk;
      if (this.log.length > 2_000_000) {
        this.logStart += this.log.length - 1_000_000;
        this.log = this.log.slice(-1_000_000);
      }
    });
    child.on("exit", () => {
      for (const reply of this.pending.values()) reply({ ok: false, error: "the server process exited" });
      this.pending.clear();
    });
    this.ready = await new Promise<HostileServerReady>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start: ${this.log}`)), 120_000);
      child.on("message", (m: { ready?: HostileServerReady; id?: number }) => {
        if (m.ready) {
          clearTimeout(timer);
          resolve(m.ready);
        } else if (m.id !== undefined) {
          this.pending.get(m.id)?.(m as { ok: boolean });
          this.pending.delete(m.id);
        }
      });
      child.once("exit", (code) =>
        reject(new Error(`the server exited (${code}) before listening: ${this.log}`)),
      );
    });
  }

  get alive(): boolean {
    return this.child?.exitCode === null && this.child.signalCode === null;
  }

  /** Runs an op of the fixture; a reply missing past `ms` is fatal (the database is wedged). */
  call<T>(op: string, ms = ANSWER_MS, args: Json = {}): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Fatal(`the server's "${op}" got no reply within ${ms} ms: its database is wedged`));
      }, ms);
      this.pending.set(id, (reply) => {
        clearTimeout(timer);
        if (reply.ok) resolve(reply.result as T);
        else reject(new Fatal(`the server's "${op}" failed: ${reply.error}`));
      });
      if (!this.child?.send({ id, op, ...args })) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(new Fatal("the server process is gone"));
      }
    });
  }

  /** Where its log stands now. */
  mark(): number {
    return this.logStart + this.log.length;
  }

  /** The first lines of each error it logged since `mark` (stack frames left out). */
  errorsSince(mark: number): string {
    const lines = this.log
      .slice(Math.max(0, mark - this.logStart))
      .split("\n")
      .filter((l) => l.trim() && !/^\s+at /.test(l) && !/^\s*[{}]\s*$/.test(l));
    return lines
      .slice(0, 4)
      .map((l) => l.trim().slice(0, 240))
      .join(" | ");
  }

  /** Closes it, or kills it if it cannot close (a killed server's PostgreSQL schema is dropped from here). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.alive) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const closed = await this.call("close", 10_000).then(
      () => true,
      () => false,
    );
    if (!closed) child.kill("SIGKILL");
    await exited;
    if (!closed) await this.dropSchema();
  }

  async restart(): Promise<void> {
    this.restarts++;
    const child = this.child;
    if (child && this.alive) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
      await this.dropSchema();
    }
    this.pending.clear();
    await this.start();
  }

  private async dropSchema(): Promise<void> {
    const url = process.env.ARC_TEST_DATABASE_URL;
    if (!this.ready.schema || !url) return;
    const admin = await openPostgresDatabase(url, { maxConnections: 1 });
    await admin.query(`drop schema if exists ${this.ready.schema} cascade`).finally(() => admin.close());
  }
}

// ---------------------------------------------------------------------------------------------------------------
// One case

let uids = 0;

/** An HTTP exchange on a connection of its own (so no keep-alive reuse can be blamed), the body read whole. */
function answerOf(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: Uint8Array },
  ms: number,
): Promise<{ status: number; text: string; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const headers = { ...init.headers, "content-length": String(init.body?.byteLength ?? 0) };
    const req = request(url, { method: init.method ?? "GET", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString("utf8"),
          headers: res.headers,
        }),
      );
      res.on("error", reject);
    });
    const timer = setTimeout(() => {
      const timeout = new Error(`no answer within ${ms} ms`);
      timeout.name = "TimeoutError";
      req.destroy(timeout);
    }, ms);
    req.on("error", reject);
    req.on("close", () => clearTimeout(timer));
    req.end(init.body);
  });
}

async function healthy(server: FuzzedServer): Promise<string | null> {
  try {
    const { status, text } = await answerOf(`${server.ready.url}/health`, {}, HEALTH_MS);
    return status === 200 ? null : `/health answered ${status} ${text.slice(0, 200)}`;
  } catch (error) {
    return `/health got no answer: ${(error as Error).message}`;
  }
}

/** The request of a case: its path (parameters filled in), body bytes, headers, and what it is, in words. */
function requestOf(route: RouteSpec, c: Case, x: Ctx) {
  const params = (route.params ?? []).map((valid, i) => {
    const choice = c.params[i];
    if ("hostile" in choice) return SEGMENTS[choice.hostile];
    const values = valid(x);
    return values.length ? enc(values[choice.valid % values.length]) : "none";
  });
  let p = 0;
  const path = route.path.replace(/:[a-z]+/g, () => params[p++]);
  const described: string[] = [];
  let bytes: Uint8Array | undefined;
  let sent: unknown;
  if ("raw" in c.body) {
    bytes = RAW_BODIES[c.body.raw].bytes;
    described.push(`raw body: ${RAW_BODIES[c.body.raw].label}`);
  } else {
    let body = route.bodies[c.variant % route.bodies.length](x);
    if (body === undefined && c.body.mutations.length > 0) body = {};
    for (const m of c.body.mutations) {
      const result = mutate(body, m, route.dictionary ?? []);
      body = result.body;
      described.push(result.did);
    }
    if (body !== undefined) {
      const text = serialize(body);
      bytes = new TextEncoder().encode(text);
      sent = JSON.parse(text);
    }
    if (described.length === 0) described.push(body === undefined ? "no body" : "valid body");
  }
  const headers: Record<string, string> = {
    authorization: `Bearer ${route.admin ? x.ready.adminKey : x.ready.tenant.key}`,
  };
  const contentType = CONTENT_TYPES[c.contentType];
  if (contentType) headers["content-type"] = contentType;
  if (contentType !== "application/json") described.push(`content-type: ${contentType ?? "none"}`);
  for (const h of c.headers) {
    headers[GATEWAY_HEADERS[h.name]] = HEADER_VALUES[h.value];
    described.push(`${GATEWAY_HEADERS[h.name]}: ${preview(HEADER_VALUES[h.value])}`);
  }
  const shown = path.length > 120 ? `${path.slice(0, 120)}…` : path;
  return {
    path,
    params,
    bytes,
    sent,
    headers,
    what: `${route.method} ${shown} with ${described.join("; ")}`,
  };
}

/**
 * Sends one case and checks every property; throws an Error listing the problems (a Fatal one if the server is
 * down). While shrinking, a case whose reads were already broken before it is passed untried: the state an earlier
 * case left must not be blamed on a smaller one.
 */
async function runCase(server: FuzzedServer, route: RouteSpec, c: Case, shrinking: boolean): Promise<void> {
  const ready = server.ready;
  const stateBefore = await server.call<HostileServerState>("state").catch((error: Error) => {
    throw new Fatal(`${route.method} ${route.path}, before the case\n    - ${error.message}`);
  });
  const x: Ctx = { ready, ids: stateBefore.ids, uid: ++uids };
  const { path, params, bytes, sent, headers, what } = requestOf(route, c, x);
  const key = route.admin ? ready.adminKey : ready.tenant.key;
  const read = (readPath: string) =>
    answerOf(`${ready.url}${readPath}`, { headers: { authorization: `Bearer ${key}` } }, ANSWER_MS);
  if (shrinking) {
    for (const check of route.readBack?.(x, sent, {}, params) ?? []) {
      const got = await read(check.path).catch(() => ({ status: 599 }));
      if (got.status >= 500) return;
    }
  }
  const problems: string[] = [];
  const mark = server.mark();
  const fail = (fatal: boolean) => {
    const log = server.errorsSince(mark);
    const message = `${what}\n    - ${problems.join("\n    - ")}${log ? `\n    server log: ${log}` : ""}`;
    return fatal ? new Fatal(message) : new Error(message);
  };
  /** A fixture op whose failure (the database wedged) is this case's fatal problem. */
  const ipc = async <T>(op: string): Promise<T> => {
    try {
      return await server.call<T>(op);
    } catch (error) {
      problems.push((error as Error).message);
      throw fail(true);
    }
  };

  const recorded = route.gateway ? await ipc<{ lost: number; dropped: number }>("flush") : undefined;
  let answer: { status: number; text: string; headers: IncomingHttpHeaders } | undefined;
  try {
    answer = await answerOf(`${ready.url}${path}`, { method: route.method, headers, body: bytes }, ANSWER_MS);
  } catch (error) {
    const e = error as Error & { code?: string };
    // A server may refuse a body over its limit before reading it and close the connection under the upload.
    const refusedUpload =
      (bytes?.byteLength ?? 0) > MAX_BODY_BYTES && /^(EPIPE|ECONNRESET)$/.test(e.code ?? "");
    if (!refusedUpload) {
      problems.push(
        e.name === "TimeoutError"
          ? `no answer within ${ANSWER_MS} ms`
          : `the connection failed: ${e.code} ${e.message}`,
      );
    }
  }
  const down = await healthy(server);
  if (down) problems.push(`after the case ${down}`);
  if (!server.alive) {
    problems.push("the server process exited");
    throw fail(true);
  }
  if (answer && answer.status >= 500)
    problems.push(`answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  for (const shown of ready.paths) {
    if (answer && answer.status >= 400 && answer.text.includes(shown)) {
      problems.push(
        `refused with ${answer.status}, showing the server path ${shown}: ${answer.text.slice(0, 300)}`,
      );
    }
  }

  const recordedAfter = route.gateway ? await ipc<{ lost: number; dropped: number }>("flush") : undefined;
  const stateAfter = await ipc<HostileServerState>("state");
  if (stateAfter.polluted.length)
    problems.push(`polluted ${stateAfter.polluted.join(", ")} (removed again to go on)`);
  // Down for a reason other than the pollution just removed: the server cannot be trusted any more.
  if (down && (await healthy(server))) throw fail(true);
  const delta: Record<string, number> = {};
  for (const [table, n] of Object.entries(stateAfter.counts)) {
    if (n !== stateBefore.counts[table]) delta[table] = n - stateBefore.counts[table];
  }
  // The gateway records every call a model took part in: the model's own answers (marked with the model version),
  // whatever their status, and its 5xx when the model failed (the 5xx is a problem of its own above).
  const forwarded = route.gateway && answer?.headers["x-arc-model-version"] !== undefined;
  const recordedFailure = route.gateway && (answer?.status ?? 0) >= 500;
  if (answer && answer.status >= 400 && !forwarded && !recordedFailure && Object.keys(delta).length) {
    problems.push(`refused with ${answer.status} but changed rows: ${JSON.stringify(delta)}`);
  }
  if (recorded && recordedAfter && answer && (forwarded || answer.status < 300)) {
    const lost = recordedAfter.lost + recordedAfter.dropped - recorded.lost - recorded.dropped;
    if (lost > 0) problems.push(`answered ${answer.status} but the gateway lost ${lost} trace(s)`);
    // With the SDK's step id (x-arc-step-id) a call is merged into that step: no new row is due then.
    else if (!delta.traces && !delta.steps && !headers["x-arc-step-id"]) {
      problems.push(`answered ${answer.status} but recorded no trace`);
    }
  }

  if (answer && answer.status < 300) {
    let json: Json = {};
    try {
      json = JSON.parse(answer.text) as Json;
    } catch {}
    if (route.accepted) {
      const found = await route.accepted(x, sent, json, delta, server).catch((error: Error) => {
        problems.push(error.message);
        throw fail(true);
      });
      problems.push(...found);
    }
    for (const check of route.readBack?.(x, sent, json, params) ?? []) {
      try {
        const got = await read(check.path);
        if (got.status >= 500 || (check.must && got.status !== check.must)) {
          problems.push(`then GET ${check.path} answered ${got.status}: ${got.text.slice(0, 200)}`);
        }
      } catch (error) {
        problems.push(`then GET ${check.path} got no answer (${(error as Error).message})`);
      }
    }
    if (route.ingest) await ipc("detect");
    const downLater = await healthy(server);
    if (downLater) {
      problems.push(`after reading it back ${downLater}`);
      throw fail(true);
    }
  }
  if (problems.length) throw fail(false);
}

/** A route's share of the time budget. */
function budgetOf(route: RouteSpec): number {
  return (BUDGET_MS * (route.weight ?? 1)) / ROUTES.reduce((sum, r) => sum + (r.weight ?? 1), 0);
}

/** One line per kind of failure: what went wrong and the server's error, ids and numbers left out. */
const kindOf = (message: string) =>
  message
    .split("\n")
    .slice(1)
    .join(" ")
    .replace(/\b(mv|dep|run|ten|val|ds)_[\w-]+/g, "ID")
    .replace(/\d+/g, "N")
    .slice(0, 200);

/**
 * Runs a route's property with its own seed, within its share of the time budget: the first failure is shrunk and
 * reported, or with ARC_FUZZ_KEEP_GOING=1 the first case of each kind of failure is collected and all are reported.
 */
async function fuzzRoute(server: FuzzedServer, route: RouteSpec, seed: number): Promise<void> {
  if (server.restarts > MAX_RESTARTS) {
    assert.fail(`not run: the server was wedged and restarted ${server.restarts} times`);
  }
  const kinds = new Map<string, string>();
  let deadline = performance.now() + budgetOf(route);
  let failed = false;
  let fatal = false;
  // Past the deadline (or once the server had to be restarted) the remaining runs and shrinks pass untried.
  const property = fc.asyncProperty(caseArb(route), async (c) => {
    if (fatal || performance.now() > deadline) return;
    try {
      await runCase(server, route, c, failed && !KEEP_GOING);
    } catch (error) {
      if (error instanceof Fatal) {
        fatal = !KEEP_GOING || server.restarts >= MAX_RESTARTS;
        await server.restart();
      }
      if (!KEEP_GOING) {
        if (!failed) deadline = Math.max(deadline, performance.now() + SHRINK_MS);
        failed = true;
        throw error;
      }
      const message = (error as Error).message;
      if (!kinds.has(kindOf(message))) kinds.set(kindOf(message), message);
    }
  });
  await fc.assert(property, { seed, numRuns: RUNS });
  if (kinds.size)
    assert.fail(`${kinds.size} kind(s) of failure (seed ${seed}):\n${[...kinds.values()].join("\n")}`);
}

// ---------------------------------------------------------------------------------------------------------------

for (const target of databasesUnderTest()) {
  describe(`hostile input on every POST and PUT route, on ${target.name}`, { skip: target.skip }, () => {
    const server = new FuzzedServer(target.name);
    before(() => server.start(), { timeout: 150_000 });
    after(() => server.stop());

    it("has a fuzzed route for every POST and PUT route the server registers", () => {
      const registered = server.ready.routes
        .filter((r) => ["POST", "PUT", "PATCH"].includes(r.method))
        .map((r) => `${r.method} ${r.path}`)
        .sort();
      assert.deepEqual(
        registered,
        ROUTES.map((r) => `${r.method} ${r.path}`).sort(),
        "every POST/PUT route needs an entry (valid bodies, checks) in ROUTES",
      );
    });

    for (const [i, route] of ROUTES.entries()) {
      it(
        `${route.method} ${route.path}: below 500, no hang, /health up, no pollution, no partial write`,
        {
          timeout: budgetOf(route) + 4 * ANSWER_MS + 150_000,
        },
        () => fuzzRoute(server, route, SEED + i),
      );
    }
  });
}
