/**
 * Hostile values the fuzz suite splices into requests: strings, dates, numbers and structures that JSON can carry
 * (and some it cannot), whole bodies that are not JSON, content types, path segments, header and query values.
 */
import fc from "fast-check";

/** A JSON fragment spliced into the body as written (so it can be what JSON.stringify cannot make), shown by label. */
export class Raw {
  constructor(
    readonly label: string,
    readonly json: string,
  ) {}
  [fc.toStringMethod](): string {
    return this.label;
  }
}
export const raw = (label: string, json: string) => new Raw(label, json);
export const str = (label: string, s: string) => new Raw(label, JSON.stringify(s));
export const long = (n: number, ch = "x") => str(`"${ch}"×${n}`, ch.repeat(n));
export const deepObject = (depth: number) =>
  raw(`{"a":…} nested ${depth} deep`, '{"a":'.repeat(depth) + "1" + "}".repeat(depth));
export const deepArray = (depth: number) =>
  raw(`[…] nested ${depth} deep`, "[".repeat(depth) + "]".repeat(depth));
export const many = (label: string, item: string, n: number) =>
  raw(`[${label}]×${n}`, `[${new Array(n).fill(item).join(",")}]`);

export const STRINGS: Raw[] = [
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
export const DATES: Raw[] = [
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
export const NUMBERS: Raw[] = [
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
export const NUMERIC_STRINGS: Raw[] = [
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
export const STRUCTURES: Raw[] = [
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
export const ANY: Raw[] = [
  ...STRINGS,
  ...DATES,
  ...NUMBERS,
  ...NUMERIC_STRINGS,
  ...STRUCTURES,
  raw("false", "false"),
];
export const KEYS = [
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
export function poolFor(current: unknown): Raw[] {
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
export const RAW_BODIES: { label: string; bytes: Uint8Array }[] = [
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
export const CONTENT_TYPES: (string | null)[] = [
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
export const SEGMENTS = [
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
export const GATEWAY_HEADERS = [
  "x-arc-session",
  "x-arc-user",
  "x-arc-env",
  "x-arc-pattern",
  "x-arc-trace-id",
  "x-arc-step-id",
  "x-arc-parent-step-id",
];
export const HEADER_VALUES = [
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

/** Query values: plain ones are percent-encoded when the query is written, `encoded` ones are sent as they are. */
export const QUERY_VALUES: { label: string; encoded: string }[] = [
  ...[
    "",
    "0",
    "-1",
    "1",
    "1.5",
    "1e400",
    "NaN",
    "Infinity",
    "2147483648",
    "99999999999999999999",
    "0x10",
    " 5",
    "0000-01-01",
    "99999-01-01T00:00:00Z",
    "2026-02-30",
    "2026-05-01T10:00:00+25:00",
    "2026-05-01T10:00:00Z",
    "x".repeat(300),
    "x".repeat(10_000),
    "__proto__",
    "constructor",
    "\u0000",
    "../../etc/passwd",
    "' OR '1'='1",
    "😀",
    "\u202eevil",
    "true",
    "null",
    "jsonl",
    "verl",
    "ok",
    "eval",
  ].map((v) => ({ label: JSON.stringify(v).slice(0, 40), encoded: encodeURIComponent(v) })),
  ...["%", "%zz", "%ED%A0%80", "%00", "%F0%9F", "%FF%FE", "a+b", "%2B", "%26x%3D1", "%25"].map((v) => ({
    label: `raw ${v}`,
    encoded: v,
  })),
];
/** Query keys a route does not read, or reads in a shape it does not expect. */
export const QUERY_KEYS = [
  "__proto__",
  "constructor",
  "__proto__[polluted]",
  "limit[]",
  "limit[$gt]",
  "",
  "%00",
  "%ED%A0%80",
  "x".repeat(300),
  "unknown",
];
/** Whole query strings (after the `?`) that are not the pairs a route expects. */
export const RAW_QUERIES = [
  "",
  "&&&",
  "=",
  "==&=",
  "%",
  "a=1&".repeat(5_000),
  `q=${"%41".repeat(6_000)}`,
  "limit=1&limit=2&limit=3",
  "limit",
  "#fragment",
];
/** Headers a read may carry, beside its key. */
export const READ_HEADERS = [
  "accept",
  "accept-encoding",
  "range",
  "if-none-match",
  "if-modified-since",
  "cookie",
  "arc-tenant",
  "origin",
  "content-type",
  "x-forwarded-for",
];
/** How a request presents itself: the route's own key (most), another tenant's, none, or a broken one. */
export const AUTHS = [
  "own",
  "none",
  "other tenant",
  "admin for the tenant",
  "admin for a hostile tenant",
  "bearer hostile",
  "basic",
] as const;
export type Auth = (typeof AUTHS)[number];
