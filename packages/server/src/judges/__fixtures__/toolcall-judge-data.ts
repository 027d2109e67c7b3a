import {
  type CalibrationItem,
  type CalibrationVerdict,
  DetectorRegistry,
  type JudgeDetector,
  judgeMessages,
  type Rubric,
  solutionsByQuestion,
  type Task,
  type Trace,
  toOpenAiTools,
} from "@arc/core";
import { toolcallFamily } from "@arc/core/families";
import OpenAI from "openai";

/** A trace of a `toolcall` model's answer and what Arc's detectors (the family's verifier first) say of it. */
export interface LabelledTrace {
  trace: Trace;
  label: CalibrationVerdict;
  /** What the verdict quotes: the value the verifier found wrong, else the tool called, else the answer's text. */
  evidence: string;
}

const TOOLS = toOpenAiTools(toolcallFamily.tools) as unknown as OpenAI.ChatCompletionTool[];

/**
 * The shipped judge's confidence in every verdict it learns to write: a constant of its training targets, not a
 * calibrated probability (its calibration against the verifier is measured instead).
 */
const TRAINED_CONFIDENCE = 0.9;
/** Characters of an answer's text quoted as evidence when it made no tool call. */
const EVIDENCE_CHARS = 40;

/**
 * Asks a model served over the OpenAI API each task's request as the demo's production agent does (the user's
 * message, the family's tools, `max_tokens` 96), once per temperature, and labels each answer with Arc's default
 * detectors and the task's reference solution: the verifier's failed/passed and failure class. Answers the detectors
 * cannot decide, and repeats of an answer already kept for the same request, are left out.
 */
export async function sampleLabelledTraces(options: {
  baseURL: string;
  apiKey: string;
  model: string;
  tasks: readonly Task[];
  temperatures: readonly number[];
  /** Requests in flight at once. */
  concurrency?: number;
}): Promise<LabelledTrace[]> {
  const client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey });
  const registry = new DetectorRegistry().resolveSolutionsWith(solutionsByQuestion(options.tasks));
  const jobs = options.tasks.flatMap((task, i) =>
    options.temperatures.map((temperature, k) => ({ task, temperature, id: `jt-${i}-${k}` })),
  );
  const out: (LabelledTrace | null)[] = new Array(jobs.length).fill(null);
  const seen = new Set<string>();
  let next = 0;
  const worker = async () => {
    for (let j = next++; j < jobs.length; j = next++) {
      const { task, temperature, id } = jobs[j];
      const messages = [{ role: "user" as const, content: task.question }];
      const reply = await client.chat.completions.create({
        model: options.model,
        messages,
        tools: TOOLS,
        temperature,
        seed: j,
        max_tokens: 96,
      });
      const message = reply.choices[0]?.message;
      const calls = (message?.tool_calls ?? []).flatMap((c) => (c.type === "function" ? [c.function] : []));
      const at = new Date().toISOString();
      const trace = {
        id,
        env: "toolcall",
        startedAt: at,
        steps: [
          {
            id: `${id}-llm`,
            kind: "llm",
            startedAt: at,
            llm: {
              messages,
              tools: TOOLS,
              output: {
                content: message?.content ?? null,
                ...(message?.tool_calls?.length ? { toolCalls: message.tool_calls } : {}),
              },
            },
          },
        ],
      } as unknown as Trace;
      const answer = JSON.stringify([task.question, message?.content, calls]);
      if (seen.has(answer)) continue;
      seen.add(answer);
      const judgement = await registry.judge(trace);
      if (judgement.status === "unknown") continue;
      const answerText = `${message?.content ?? ""} ${calls.map((c) => `${c.name}(${c.arguments})`).join(" ")}`;
      const actual = judgement.primary?.evidence.actual;
      const wrongValue = typeof actual === "string" || typeof actual === "number" ? String(actual) : "";
      /** A quote of the answer: the value found wrong where it appears in it, else the tool called or its text. */
      const evidence =
        wrongValue !== "" && answerText.includes(wrongValue)
          ? wrongValue
          : (calls[0]?.name ?? (message?.content ?? "").slice(0, EVIDENCE_CHARS));
      out[j] = {
        trace,
        label:
          judgement.status === "failed"
            ? { failed: true, class: judgement.primary?.class }
            : { failed: false },
        evidence,
      };
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));
  return out.filter((t): t is LabelledTrace => t !== null);
}

/**
 * The verdict a judge should write for a labelled trace, as the judge's schema-constrained decoding writes it (the
 * schema's keys in order, no spaces): the label's class, that class's severity in the rubric, and the evidence.
 */
export function judgeReplyFor(rubric: Rubric, labelled: LabelledTrace): string {
  const { label } = labelled;
  const cls = label.failed ? rubric.classes.find((c) => c.name === label.class) : undefined;
  if (label.failed && !cls)
    throw new Error(
      `${labelled.trace.id}: the label's class ${label.class} is not a class of the rubric (${rubric.classes.map((c) => c.name).join(", ")})`,
    );
  return JSON.stringify({
    failed: label.failed,
    class: cls?.name ?? "none",
    severity: cls?.severity ?? "none",
    evidence: labelled.evidence,
    confidence: TRAINED_CONFIDENCE,
  });
}

/** One chat example of the judge's SFT data (OpenAI's fine-tuning format): the judge's prompt and its verdict. */
export function judgeExample(rubric: Rubric, labelled: LabelledTrace): { messages: object[] } {
  return {
    messages: [
      ...judgeMessages(rubric, labelled.trace),
      { role: "assistant", content: judgeReplyFor(rubric, labelled) },
    ],
  };
}

/** Each labelled trace beside the judge's verdict on it (null: it could not judge), `concurrency` judged at once. */
export async function judgeLabelledTraces(
  judge: JudgeDetector,
  traces: readonly LabelledTrace[],
  concurrency = 1,
): Promise<CalibrationItem[]> {
  const items: CalibrationItem[] = new Array(traces.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < traces.length; i = next++) {
      const { trace, label } = traces[i];
      const verdict = await judge.judge(trace);
      items[i] = {
        traceId: trace.id,
        label,
        judged: verdict.status === "unknown" ? null : { failed: verdict.failed, class: verdict.path },
      };
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return items;
}
