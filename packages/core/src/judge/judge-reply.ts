import { ArcError } from "../errors/arc-error.ts";
import type { Rubric } from "./rubric.ts";

/** The judge's structured answer about one trace. */
export interface JudgeReply {
  failed: boolean;
  /** A rubric class when failed, `none` when not. */
  class: string;
  severity: "none" | "low" | "medium" | "high";
  /** A quote from the trace that shows the failure (or why it passes). */
  evidence: string;
  /** How sure the judge is, in [0, 1]. */
  confidence: number;
}

/** A judge's reply that is not the structured answer it was asked for: what is wrong with it. */
export class JudgeReplyError extends ArcError {
  constructor(message: string) {
    super(message, { name: "JudgeReplyError", statusCode: 502 });
  }
}

/**
 * The confidences a judge may state, in tenths: JSON Schema's `minimum`/`maximum` have no place in a decoding grammar,
 * an enum does, so grammar-constrained decoding keeps a judge's confidence in [0, 1].
 */
export const CONFIDENCE_LEVELS: readonly number[] = Array.from({ length: 11 }, (_, i) => i / 10);

/**
 * The JSON Schema of the answer the judge is asked for (OpenAI `response_format` `json_schema`, strict): the
 * rubric's classes and `none` are the only classes it may name, and a confidence in tenths. Keys in the order the judge
 * should write them.
 */
export function judgeReplySchema(rubric: Rubric): Record<string, unknown> {
  return {
    type: "object",
    properties: {
      failed: { type: "boolean" },
      class: { type: "string", enum: [...rubric.classes.map((c) => c.name), "none"] },
      severity: { type: "string", enum: ["none", "low", "medium", "high"] },
      evidence: { type: "string" },
      confidence: { type: "number", enum: CONFIDENCE_LEVELS },
    },
    required: ["failed", "class", "severity", "evidence", "confidence"],
    additionalProperties: false,
  };
}

/** A judge's reply as the JSON object it must be, or a `JudgeReplyError` saying what it is instead. */
export function replyObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new JudgeReplyError(
      `the judge's reply is not JSON (${(error as Error).message}): ${text.slice(0, 200)}`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new JudgeReplyError(`the judge's reply is not a JSON object: ${text.slice(0, 200)}`);
  return value as Record<string, unknown>;
}

/**
 * Reads the judge's reply strictly: one JSON object with exactly the schema's fields, a class of the rubric (or
 * `none` exactly when it did not fail), a confidence in [0, 1]. Anything else is a `JudgeReplyError` that says
 * what is wrong, never a guess.
 */
export function parseJudgeReply(text: string, rubric: Rubric): JudgeReply {
  const reply = replyObject(text);
  const fields = ["failed", "class", "severity", "evidence", "confidence"];
  const missing = fields.filter((f) => !(f in reply));
  if (missing.length > 0) throw new JudgeReplyError(`the judge's reply lacks ${missing.join(", ")}`);
  const extra = Object.keys(reply).filter((f) => !fields.includes(f));
  if (extra.length > 0) throw new JudgeReplyError(`the judge's reply has unknown fields ${extra.join(", ")}`);
  if (typeof reply.failed !== "boolean")
    throw new JudgeReplyError(`failed: expected true or false, got ${JSON.stringify(reply.failed)}`);
  const classes = rubric.classes.map((c) => c.name);
  if (typeof reply.class !== "string" || (reply.class !== "none" && !classes.includes(reply.class)))
    throw new JudgeReplyError(
      `class: expected one of ${[...classes, "none"].join(", ")}, got ${JSON.stringify(reply.class)}`,
    );
  if ((reply.class === "none") === reply.failed)
    throw new JudgeReplyError(
      reply.failed
        ? "class: a failed trace needs a rubric class, not none"
        : `class: a passing trace has class none, got ${reply.class}`,
    );
  if (!["none", "low", "medium", "high"].includes(reply.severity as string))
    throw new JudgeReplyError(
      `severity: expected none, low, medium or high, got ${JSON.stringify(reply.severity)}`,
    );
  if (typeof reply.evidence !== "string")
    throw new JudgeReplyError(`evidence: expected a string, got ${JSON.stringify(reply.evidence)}`);
  const confidence = reply.confidence;
  if (typeof confidence !== "number" || !(confidence >= 0 && confidence <= 1))
    throw new JudgeReplyError(`confidence: expected a number in [0, 1], got ${JSON.stringify(confidence)}`);
  return {
    failed: reply.failed,
    class: reply.class,
    severity: reply.severity as JudgeReply["severity"],
    evidence: reply.evidence,
    confidence,
  };
}
