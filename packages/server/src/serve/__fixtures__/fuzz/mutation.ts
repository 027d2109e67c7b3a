/** Mutations of a valid JSON body: set a place to a hostile value, add a hostile key, drop a place, repeat an array. */
import fc from "fast-check";
import { ANY, KEYS, poolFor, Raw, STRUCTURES } from "./hostile-values.ts";

/** One change to a valid body: `at` picks the place, `pick` the value or key, `from` the pool it comes from. */
export interface Mutation {
  op: "set" | "key" | "drop" | "repeat";
  at: number;
  pick: number;
  from: "fitting" | "any" | "dictionary";
}

export const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom<Mutation["op"][]>("set", "set", "set", "key", "drop", "repeat"),
  at: fc.nat(),
  pick: fc.nat(),
  from: fc.constantFrom<Mutation["from"][]>("fitting", "fitting", "any", "dictionary", "dictionary"),
});

/** The most bytes a repeated array grows to (four times the fixture server's body limit). */
const MAX_REPEATED_BYTES = 4 * 1024 * 1024;

type Path = (string | number)[];
const showPath = (path: Path) => (path.length ? path.join(".") : "(body)");
export const preview = (value: unknown) =>
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
export function mutate(body: unknown, m: Mutation, dictionary: Raw[]): { body: unknown; did: string } {
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
  // at most 5,000 items and about 4 MB: past the body limit either way, and cheap to write
  const bytes = serialize(items).length;
  const times = Math.max(
    2,
    Math.min(
      [2, 50, 1000][m.pick % 3],
      Math.floor(5000 / items.length),
      Math.floor(MAX_REPEATED_BYTES / bytes),
    ),
  );
  const n = items.length;
  for (let i = n; i < n * times; i++) items.push(items[i % n]);
  return { body, did: `${showPath(path)} repeated ×${times} (${items.length} items)` };
}

/** JSON text of a body with its spliced values written as they are. */
export function serialize(body: unknown): string {
  const spliced: Raw[] = [];
  const text = JSON.stringify(body, (_key, value) =>
    value instanceof Raw ? `\u0000raw${spliced.push(value) - 1}\u0000` : value,
  );
  return text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_match, i: string) => spliced[Number(i)].json);
}
