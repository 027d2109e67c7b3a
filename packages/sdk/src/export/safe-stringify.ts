/**
 * JSON of a trace or feedback record. The fast path is plain `JSON.stringify`; when that throws (a cycle or
 * a bigint in user-supplied input/output/metadata) it retries with cycles replaced by "[Circular]" and bigints
 * by strings. Returns undefined only when even that fails (e.g. a throwing `toJSON`).
 */
export function safeStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    try {
      const ancestors: object[] = [];
      return JSON.stringify(value, function (this: unknown, _key, v: unknown) {
        if (typeof v === "bigint") return v.toString();
        if (typeof v !== "object" || v === null) return v;
        while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
        if (ancestors.includes(v)) return "[Circular]";
        ancestors.push(v);
        return v;
      });
    } catch {
      return undefined;
    }
  }
}
