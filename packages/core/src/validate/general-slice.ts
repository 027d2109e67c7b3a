import { z } from "zod";
import type { ChatTurn } from "../tasks/index.ts";

/**
 * How a general item's answer is checked: `number` (the last number in the answer equals `expected`, so
 * "35 + 30 = 65" answers 65), `exact` (the answer, trimmed of spaces, quotes and a final period, equals `expected`
 * ignoring case) or `contains` (`expected` appears in the answer as a whole word, ignoring case).
 */
export const GeneralCheck = z.enum(["number", "exact", "contains"]);
export type GeneralCheck = z.infer<typeof GeneralCheck>;

/**
 * One item of the general slice: a prompt unrelated to any agent's task (arithmetic, copying, capitals, unit facts,
 * simple instructions) with a checkable answer, so validation sees whether a candidate kept what the base knew.
 */
export const GeneralItem = z
  .object({
    id: z.string().min(1).describe("stable id, unique in the slice"),
    topic: z.string().min(1).describe("what the item tests: arithmetic, copy, capital, unit, instruction"),
    prompt: z.string().min(1).describe("the user message the model answers"),
    check: GeneralCheck.describe("how the answer is checked"),
    expected: z.string().min(1).describe("the right answer, as the check compares it"),
  })
  .strict();
export type GeneralItem = z.infer<typeof GeneralItem>;

/** A general item's prompt as chat turns. */
export function generalMessages(item: GeneralItem): ChatTurn[] {
  return [{ role: "user", content: item.prompt }];
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Whether an output answers a general item right, by the item's check; with why not when it does not. */
export function judgeGeneral(item: GeneralItem, output: string): { pass: boolean; reason?: string } {
  const quoted = `"${output.slice(0, 80)}"`;
  if (item.check === "number") {
    const last = output
      .replace(/(\d),(\d{3})/g, "$1$2")
      .match(/-?\d+(?:\.\d+)?/g)
      ?.at(-1);
    return last !== undefined && Number(last) === Number(item.expected)
      ? { pass: true }
      : { pass: false, reason: `expected the number ${item.expected}, got ${quoted}` };
  }
  if (item.check === "exact") {
    const answer = output
      .trim()
      .replace(/^["'`]+|["'`]+$/g, "")
      .replace(/\.$/, "")
      .trim();
    return answer.toLowerCase() === item.expected.toLowerCase()
      ? { pass: true }
      : { pass: false, reason: `expected exactly "${item.expected}", got ${quoted}` };
  }
  return new RegExp(`(^|\\W)${escapeRegExp(item.expected)}(\\W|$)`, "i").test(output)
    ? { pass: true }
    : { pass: false, reason: `expected "${item.expected}" in the answer, got ${quoted}` };
}
