/** The HTTP request a case makes: path parameters and query filled in, the body mutated, its key and headers. */
import { type Case, headerNames } from "./case-arbitrary.ts";
import {
  AUTHS,
  type Auth,
  CONTENT_TYPES,
  HEADER_VALUES,
  QUERY_KEYS,
  QUERY_VALUES,
  RAW_BODIES,
  RAW_QUERIES,
  SEGMENTS,
} from "./hostile-values.ts";
import { mutate, preview, serialize } from "./mutation.ts";
import { type Ctx, enc, type RouteSpec } from "./route-spec.ts";

/** Broken bearer keys, picked by a case's variant. */
const HOSTILE_KEYS = ["x".repeat(5000), "\u00ff\u00fe", "a b", "arc_sk_", "__proto__", ""];

/** The key headers of a case: its route's own key, or one it must be refused with. */
function keyHeaders(route: RouteSpec, auth: Auth, c: Case, x: Ctx): Record<string, string> {
  const { ready } = x;
  const kind = route.key ?? "tenant";
  const own = kind === "admin" ? ready.adminKey : ready.tenant.key;
  const present = (key: string): Record<string, string> =>
    kind === "session" ? { cookie: `arc_session=${key}` } : { authorization: `Bearer ${key}` };
  switch (auth) {
    case "own":
      return kind === "none" ? {} : present(own);
    case "none":
      return {};
    case "other tenant":
      return present(kind === "admin" ? ready.tenant.key : ready.bystander.key);
    case "admin for the tenant":
      return { ...present(ready.adminKey), "arc-tenant": ready.tenant.name };
    case "admin for a hostile tenant":
      return { ...present(ready.adminKey), "arc-tenant": HEADER_VALUES[c.variant % HEADER_VALUES.length] };
    case "bearer hostile":
      return present(HOSTILE_KEYS[c.variant % HOSTILE_KEYS.length]);
    case "basic":
      return kind === "session" ? { cookie: "arc_session" } : { authorization: "Basic dXNlcjpwYXNz" };
  }
}

/** The request of a case: its path and query, body bytes, headers, and what it is, in words. */
export function requestOf(route: RouteSpec, c: Case, x: Ctx) {
  const params = (route.params ?? []).map((valid, i) => {
    const choice = c.params[i];
    if ("hostile" in choice) return SEGMENTS[choice.hostile];
    const values = valid(x);
    return values.length ? enc(values[choice.valid % values.length]) : "none";
  });
  let p = 0;
  const path = route.path.replace(/:[a-z]+(\{[^}]*\})?/g, () => params[p++]);
  const described: string[] = [];
  let query = "";
  if ("raw" in c.query) {
    query = `?${RAW_QUERIES[c.query.raw]}`;
    described.push(`query ${preview(query)}`);
  } else if (c.query.pairs.length) {
    const keys = [...(route.query ?? []), ...QUERY_KEYS];
    const pairs = c.query.pairs.map(({ key, value }) => {
      const name = keys[key % keys.length];
      const named =
        route.queryValues && Object.hasOwn(route.queryValues, name) ? route.queryValues[name] : undefined;
      const valid = "valid" in value && named ? named(x) : [];
      const existing = "valid" in value && valid.length ? valid[value.valid % valid.length] : undefined;
      return {
        key: name,
        value:
          existing !== undefined
            ? { label: JSON.stringify(existing), encoded: enc(existing) }
            : QUERY_VALUES[("hostile" in value ? value.hostile : value.valid) % QUERY_VALUES.length],
      };
    });
    query = `?${pairs.map(({ key, value }) => `${key}=${value.encoded}`).join("&")}`;
    described.push(`query ${pairs.map(({ key, value }) => `${key.slice(0, 40)}=${value.label}`).join("&")}`);
  }
  let bytes: Uint8Array | undefined;
  let sent: unknown;
  if ("raw" in c.body) {
    bytes = RAW_BODIES[c.body.raw].bytes;
    described.push(`raw body: ${RAW_BODIES[c.body.raw].label}`);
  } else if ("mutations" in c.body && route.bodies) {
    let body = route.bodies[c.variant % route.bodies.length](x);
    if (body === undefined && c.body.mutations.length > 0) body = {};
    // repeats last, so that no later change lands on every copy of a repeated item and their size bound holds
    const ordered = [...c.body.mutations].sort(
      (a, b) => Number(a.op === "repeat") - Number(b.op === "repeat"),
    );
    for (const m of ordered) {
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
  const auth = AUTHS[c.auth];
  const headers: Record<string, string> = keyHeaders(route, auth, c, x);
  if (auth !== "own") described.push(`key: ${auth}`);
  if (bytes) {
    const contentType = CONTENT_TYPES[c.contentType];
    if (contentType) headers["content-type"] = contentType;
    if (contentType !== "application/json") described.push(`content-type: ${contentType ?? "none"}`);
  }
  const names = headerNames(route);
  for (const h of c.headers) {
    headers[names[h.name]] = HEADER_VALUES[h.value];
    described.push(`${names[h.name]}: ${preview(HEADER_VALUES[h.value])}`);
  }
  const shown = `${path}${query}`.length > 120 ? `${`${path}${query}`.slice(0, 120)}…` : `${path}${query}`;
  if (described.length === 0) described.push("nothing hostile");
  return {
    path: `${path}${query}`,
    params,
    validParams: c.params.every((choice) => "valid" in choice),
    auth,
    bytes,
    sent,
    headers,
    what: `${route.method} ${shown} with ${described.join("; ")}`,
  };
}
