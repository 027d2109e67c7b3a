import { parseDate, parseTime } from "../tasks/dates.ts";

/**
 * Brings an argument value to a canonical form so that equivalent values compare equal: case and
 * whitespace folded, dates as `YYYY-MM-DD`, 12-hour times as `HH:MM`, numeric strings as numbers,
 * numbers rounded to 6 decimals.
 */
export function normalizeValue(value: unknown): unknown {
  if (typeof value === "number") return Math.round(value * 1e6) / 1e6;
  if (typeof value !== "string") return value;
  const text = value.normalize("NFC").trim().replace(/\s+/g, " ").replace(/\.$/, "");
  const date = parseDate(text);
  if (date) return date;
  const time = parseTime(text);
  if (time) return time;
  if (/^-?\d+(\.\d+)?$/.test(text)) return normalizeValue(Number(text));
  return text.toLowerCase();
}

/** The keys of `expected` whose values differ from `actual` after normalization (missing keys included), in key order. */
export function differingArgs(expected: Record<string, unknown>, actual: Record<string, unknown>): string[] {
  return Object.keys(expected).filter((k) => normalizeValue(expected[k]) !== normalizeValue(actual[k]));
}

/** Deep equality of two JSON values after normalizing every leaf. */
export function normalizedEqual(a: unknown, b: unknown): boolean {
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    const ka = Object.keys(a).sort();
    const kb = Object.keys(b).sort();
    if (ka.join() !== kb.join()) return false;
    return ka.every((k) =>
      normalizedEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    );
  }
  return normalizeValue(a) === normalizeValue(b);
}
