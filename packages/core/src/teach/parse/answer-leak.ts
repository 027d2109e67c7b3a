/** Where a known answer occurs in a text. */
export interface AnswerLeak {
  /** The known answer that was found. */
  answer: string;
  /** [start, end) offsets of each occurrence. */
  ranges: [number, number][];
}

/** What replaces a leaked answer when the policy is `redact`. */
export const REDACTION = "[answer withheld]";

const NUMBER_IN_TEXT = /-?\d[\d,]*(?:\.\d+)?/g;
// Words right before a value that present it as the result ("the answer is 7", "= 7", "you get 7").
const REVEALING_PREFIX =
  /(?:answer|result|solution|equals?|equal to|total|is|be|gets?|got|obtains?|comes to|makes|=|:|→)\s*\**\s*$/i;
// Words right after a value that present it as the result ("7 is the answer").
const REVEALING_SUFFIX =
  /^\s*\**\s*(?:is|would be|will be|should be)\s+(?:the\s+)?(?:final\s+)?(?:answer|result|solution)/i;

function asNumber(text: string): number | null {
  const cleaned = text.trim().replace(/^\$/, "").replace(/,/g, "");
  return /^-?\d+(?:\.\d+)?$/.test(cleaned) ? Number(cleaned) : null;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * An answer is specific when finding it anywhere is evidence of a leak. Single digits and one- or
 * two-letter answers ("7", "B") occur in any explanation ("step 2"), so for those only an
 * occurrence presented as the result counts.
 */
function isSpecific(answer: string, value: number | null): boolean {
  if (value !== null) return !(Number.isInteger(value) && Math.abs(value) < 10);
  return answer.length > 2;
}

function occurrences(text: string, answer: string): [number, number][] {
  const value = asNumber(answer);
  const found: [number, number][] = [];
  if (value !== null) {
    for (const match of text.matchAll(NUMBER_IN_TEXT)) {
      const raw = match[0].replace(/,$/, "");
      if (asNumber(raw) === value) found.push([match.index, match.index + raw.length]);
    }
  } else {
    const words = answer.trim().split(/\s+/).map(escapeRegExp).join("\\s+");
    const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${words}(?![\\p{L}\\p{N}])`, "giu");
    for (const match of text.matchAll(pattern)) found.push([match.index, match.index + match[0].length]);
  }
  if (isSpecific(answer.trim(), value)) return found;
  return found.filter(
    ([start, end]) =>
      REVEALING_PREFIX.test(text.slice(Math.max(0, start - 40), start)) ||
      REVEALING_SUFFIX.test(text.slice(end, end + 40)),
  );
}

/**
 * Finds the known answers (the task's solution, a verified answer) in a teaching text. Numbers
 * match by value ("1,200" matches "1200.0", "42" does not match "420"); text matches whole words,
 * case-insensitively.
 */
export function findAnswerLeaks(text: string, answers: readonly string[]): AnswerLeak[] {
  const leaks: AnswerLeak[] = [];
  for (const answer of new Set(answers.map((a) => a.trim()).filter((a) => a !== ""))) {
    const ranges = occurrences(text, answer);
    if (ranges.length > 0) leaks.push({ answer, ranges });
  }
  return leaks;
}

/** Replaces every leaked range with REDACTION (overlapping ranges are merged). */
export function redactLeaks(text: string, leaks: readonly AnswerLeak[]): string {
  const ranges = leaks.flatMap((l) => l.ranges).sort((a, b) => a[0] - b[0]);
  let out = "";
  let cursor = 0;
  for (const [start, end] of ranges) {
    if (end <= cursor) continue;
    out += text.slice(cursor, Math.max(cursor, start)) + (start >= cursor ? REDACTION : "");
    cursor = end;
  }
  return out + text.slice(cursor);
}
