import { createHash } from "node:crypto";
import type { EvalRow, GroupJudge } from "@arc/core";
import {
  answerTrace,
  type ChatMessage,
  familyPrompt,
  type GeneralItem,
  generalMessages,
  type JudgeDetector,
  judgeGeneral,
  judgeSafety,
  type ModelOutcome,
  offeredTools,
  type SafetyItem,
  type Task,
  type TaskFamily,
  type TaskFamilyRegistry,
  taskFamilies,
  taskPrompt,
  toolCallText,
  type ValidationItem,
  verifyTask,
} from "@arc/core";
import { answerJson } from "../gateway/model-answer.ts";
import type { ModelBackend } from "../gateway/model-backend.ts";

/** How items are sent to the models. */
export interface JudgeOptions {
  /** Output budget per item (default 96). */
  maxTokens?: number;
  /** Requests in flight per model at once (default 16; the embedded engine batches them). */
  concurrency?: number;
  /** The families that prompt and verify the rows (default: the process's; a tenant's adds its own). */
  families?: TaskFamilyRegistry;
  /**
   * The tenant's judge, for the rows no verifier can judge (`isJudgeable`); without it they are not judged. With
   * `pairwise` it compares the two answers in one call instead of judging each on its own.
   */
  rubricJudge?: { detector: JudgeDetector; model: string; pairwise?: GroupJudge };
  /**
   * How long the judge's calls of one validation may take, all together (default 2 minutes): a row the judge has
   * not decided by then is left out, counted as unjudged.
   */
  judgeWithinMs?: number;
  /** The general slice, asked of both models beside the rows and judged by each item's check (default: none). */
  general?: readonly GeneralItem[];
}

/** The default of `JudgeOptions.judgeWithinMs`. */
const JUDGE_WITHIN_MS = 120_000;

/** One model's answer to one prompt, or its turns of one episode (`outputs`, the last one also `text`). */
interface Answer {
  text: string;
  latencyMs: number;
  outputTokens: number;
  /** Every model turn's output: one for a single answer, one per turn for an episode. */
  outputs: string[];
}

/** Turns an episode may take when its session never says done: a bound on a family's mistake, not a policy. */
const MAX_EPISODE_TURNS = 16;

async function ask(
  backend: ModelBackend,
  prompt: { messages: ChatMessage[]; tools?: Record<string, unknown>[] },
  maxTokens: number,
): Promise<Answer> {
  const started = performance.now();
  const res = await backend.chat({
    messages: prompt.messages,
    ...(prompt.tools ? { tools: prompt.tools } : {}),
    temperature: 0,
    max_tokens: maxTokens,
    seed: 0,
  });
  const body = (await answerJson(res)) as {
    error?: { message?: string };
    choices?: {
      message?: { content?: string | null; tool_calls?: { function: { name: string; arguments: string } }[] };
    }[];
    usage?: { completion_tokens?: number };
  } | null;
  if (res.status < 200 || res.status >= 300)
    throw new Error(`model answered ${res.status}: ${body?.error?.message ?? "no error message"}`);
  const message = body?.choices?.[0]?.message;
  const call = message?.tool_calls?.[0]?.function;
  const text = call ? toolCallText(call) : (message?.content ?? "");
  return {
    text,
    latencyMs: performance.now() - started,
    outputTokens: body?.usage?.completion_tokens ?? 0,
    outputs: [text],
  };
}

/**
 * Plays one episode of a multi-turn family's task, as a production agent would: the family's prompt and tools, each
 * answer fed to the family's session, its observation sent back as a tool message, until the session says done.
 */
async function playEpisode(
  backend: ModelBackend,
  family: TaskFamily & Required<Pick<TaskFamily, "session">>,
  task: Task,
  maxTokens: number,
): Promise<Answer> {
  const prompt = taskPrompt(family, task);
  const messages = [...prompt.messages] as ChatMessage[];
  const tools = prompt.tools as Record<string, unknown>[] | undefined;
  const session = family.session(task);
  const outputs: string[] = [];
  let latencyMs = 0;
  let outputTokens = 0;
  while (!session.done && outputs.length < MAX_EPISODE_TURNS) {
    const turn = await ask(backend, { messages, tools }, maxTokens);
    latencyMs += turn.latencyMs;
    outputTokens += turn.outputTokens;
    outputs.push(turn.text);
    const step = session.act(turn.text);
    messages.push({ role: "assistant", content: turn.text }, { role: "tool", content: step.observation });
    if (step.done) break;
  }
  return { text: outputs.at(-1) ?? "", latencyMs, outputTokens, outputs };
}

async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  });
  await Promise.all(workers);
  return out;
}

/** The task an eval row asks. */
function rowTask(row: EvalRow): Task {
  return { id: row.id, env: row.env as string, question: row.question, solution: row.solution };
}

/** An eval row a verifier can judge: its family has a verifier and the row a reference solution. */
export function isVerifiable(
  row: EvalRow,
  families: TaskFamilyRegistry = taskFamilies,
): row is EvalRow & { env: string } {
  return row.env !== undefined && row.solution !== undefined && families.verifier(row.env) !== undefined;
}

/** A row no verifier can judge that a judge can: it has the agent's recorded prompt, or a family to prompt it. */
export function isJudgeable(row: EvalRow, families: TaskFamilyRegistry = taskFamilies): boolean {
  return (
    !isVerifiable(row, families) &&
    (row.context !== undefined || (row.env !== undefined && families.find(row.env) !== undefined))
  );
}

/** The judge's verdict on an answer as an outcome; null when it could not decide (budget, outage, bad reply). */
async function judgedOutcome(
  judge: JudgeDetector,
  prompt: { messages: ChatMessage[]; tools?: Record<string, unknown>[] },
  answer: Answer,
  deadline: number,
): Promise<ModelOutcome | null> {
  const verdict = await judge.judge(answerTrace(prompt.messages, prompt.tools, answer.text), { deadline });
  if (verdict.status === "unknown") return null;
  return {
    pass: verdict.status === "passed",
    latencyMs: answer.latencyMs,
    outputTokens: answer.outputTokens,
    reason: verdict.failed ? verdict.evidence.message : undefined,
  };
}

/** Whether the candidate's answer is shown first when a judge compares the two: drawn per row from its id. */
function candidateFirst(rowId: string): boolean {
  return createHash("sha256").update(rowId).digest()[0] % 2 === 0;
}

/**
 * Both answers scored side by side in one call, in the row's drawn order (so neither model always has the first
 * place a judge may favour); an answer passes at a score of 0.5 or more, and the higher score is preferred, equal
 * scores a tie. Null when the judge could not score them.
 */
async function pairwiseOutcomes(
  judge: GroupJudge,
  rowId: string,
  prompt: { messages: ChatMessage[] },
  baseline: Answer,
  candidate: Answer,
  deadline: number,
): Promise<Pick<ValidationItem, "baseline" | "candidate" | "preference"> | null> {
  const first = candidateFirst(rowId);
  const verdict = await judge.score(
    prompt.messages,
    first ? [candidate.text, baseline.text] : [baseline.text, candidate.text],
    { deadline },
  );
  if ("unscored" in verdict) return null;
  const { scores, explanations } = verdict;
  const [candidateAt, baselineAt] = first ? [0, 1] : [1, 0];
  const outcome = (answer: Answer, at: number, other: number): ModelOutcome => ({
    pass: scores[at] >= 0.5,
    latencyMs: answer.latencyMs,
    outputTokens: answer.outputTokens,
    reason: `the judge scored it ${scores[at]} beside the other answer's ${scores[other]}${explanations[at] ? `: ${explanations[at]}` : ""}`,
  });
  const [candidateScore, baselineScore] = [scores[candidateAt], scores[baselineAt]];
  return {
    baseline: outcome(baseline, baselineAt, candidateAt),
    candidate: outcome(candidate, candidateAt, baselineAt),
    preference:
      candidateScore > baselineScore ? "candidate" : candidateScore < baselineScore ? "baseline" : "tie",
  };
}

function evalOutcome(
  row: EvalRow & { env: string },
  answer: Answer,
  families: TaskFamilyRegistry,
  episode: boolean,
): ModelOutcome {
  const result = verifyTask({ env: row.env, solution: row.solution }, answer.outputs, families);
  return {
    pass: result.status === "pass",
    latencyMs: answer.latencyMs,
    outputTokens: answer.outputTokens,
    reason: result.failure?.message ?? result.reason,
    ...(episode ? { turns: answer.outputs.length } : {}),
  };
}

/** The family whose session a row is played in: a verifiable row of a multi-turn family; else undefined. */
function episodeFamily(
  row: EvalRow,
  families: TaskFamilyRegistry,
): (TaskFamily & Required<Pick<TaskFamily, "session">>) | undefined {
  if (!isVerifiable(row, families)) return undefined;
  const family = families.find(row.env);
  return family?.session ? (family as TaskFamily & Required<Pick<TaskFamily, "session">>) : undefined;
}

/**
 * Asks both models every eval row (its recorded prompt and tools where it has them, else its family's first turn;
 * greedy), every safety item and every general-slice item, and judges each answer: a verifiable row
 * (`isVerifiable`) with its family's verifier, any other row with the tenant's judge (`options.rubricJudge`, the row
 * left out when the judge cannot decide one of its answers), safety items with `judgeSafety`, general items with
 * `judgeGeneral`. A verifiable row of a multi-turn family is played as a whole episode in the family's session
 * (`playEpisode`) and the verifier judges all its turns (`episode` items). Returns paired outcomes for
 * `decideValidation`.
 */
export async function judgeModels(
  baseline: ModelBackend,
  candidate: ModelBackend,
  rows: readonly EvalRow[],
  safety: readonly SafetyItem[],
  options: JudgeOptions = {},
): Promise<ValidationItem[]> {
  const families = options.families ?? taskFamilies;
  const maxTokens = options.maxTokens ?? 96;
  const concurrency = options.concurrency ?? 16;
  const general = options.general ?? [];
  const prompts: { messages: ChatMessage[]; tools?: Record<string, unknown>[] }[] = [
    ...rows.map((row) =>
      row.context
        ? row.context
        : {
            messages: familyPrompt(families.get(row.env as string, "row.env"), rowTask(row)),
          },
    ),
    ...safety.map((s) => ({ messages: s.messages as ChatMessage[] })),
    ...general.map((g) => ({ messages: generalMessages(g) as ChatMessage[] })),
  ];
  const [b, c] = await Promise.all(
    [baseline, candidate].map((backend) =>
      mapLimited(prompts, concurrency, (prompt, i) => {
        const row = rows[i];
        const family = row && episodeFamily(row, families);
        return family
          ? playEpisode(backend, family, rowTask(row as EvalRow & { env: string }), maxTokens)
          : ask(backend, prompt, maxTokens);
      }),
    ),
  );
  const { rubricJudge } = options;
  const judgeDeadline = Date.now() + (options.judgeWithinMs ?? JUDGE_WITHIN_MS);
  const rowItems = await mapLimited(rows, concurrency, async (row, i): Promise<ValidationItem | null> => {
    const slice: Pick<ValidationItem, "id" | "slice" | "kind"> = {
      id: row.id,
      slice: row.meta.slice,
      kind: row.meta.slice === "general" ? "general" : "pattern",
    };
    if (isVerifiable(row, families)) {
      const episode = episodeFamily(row, families) !== undefined;
      return {
        ...slice,
        judgedBy: `verifier:${row.env}`,
        ...(episode ? { episode } : {}),
        baseline: evalOutcome(row, b[i], families, episode),
        candidate: evalOutcome(row, c[i], families, episode),
      };
    }
    if (!rubricJudge) return null;
    if (rubricJudge.pairwise) {
      const compared = await pairwiseOutcomes(
        rubricJudge.pairwise,
        row.id,
        prompts[i],
        b[i],
        c[i],
        judgeDeadline,
      );
      return compared && { ...slice, judgedBy: `judge:${rubricJudge.model}`, ...compared };
    }
    const family = row.env === undefined ? undefined : families.find(row.env);
    const judged = { ...prompts[i], tools: offeredTools(prompts[i].tools, family) };
    const [before, after] = await Promise.all([
      judgedOutcome(rubricJudge.detector, judged, b[i], judgeDeadline),
      judgedOutcome(rubricJudge.detector, judged, c[i], judgeDeadline),
    ]);
    if (!before || !after) return null;
    return { ...slice, judgedBy: `judge:${rubricJudge.model}`, baseline: before, candidate: after };
  });
  const items = rowItems.filter((item): item is ValidationItem => item !== null);
  return [...items, ...checkedItems(rows.length, safety, general, b, c)];
}

/**
 * The safety and general-slice items, each answer checked by its item's own check; their answers sit in `b` and `c`
 * after the `offset` eval rows' (safety first, then general).
 */
function checkedItems(
  offset: number,
  safety: readonly SafetyItem[],
  general: readonly GeneralItem[],
  b: Answer[],
  c: Answer[],
): ValidationItem[] {
  const safetyItems = safety.map((item, k): ValidationItem => {
    const judge = (answer: Answer): ModelOutcome => {
      const j = judgeSafety(item, answer.text);
      return {
        pass: j.pass,
        latencyMs: answer.latencyMs,
        outputTokens: answer.outputTokens,
        reason: j.reason,
      };
    };
    return {
      id: item.id,
      slice: "safety",
      kind: "safety",
      safetyCheck: item.check,
      judgedBy: `safety:${item.check}`,
      baseline: judge(b[offset + k]),
      candidate: judge(c[offset + k]),
    };
  });
  const generalItems = general.map((item, k): ValidationItem => {
    const i = offset + safety.length + k;
    const judge = (answer: Answer): ModelOutcome => ({
      ...judgeGeneral(item, answer.text),
      latencyMs: answer.latencyMs,
      outputTokens: answer.outputTokens,
    });
    return {
      id: item.id,
      slice: "general-knowledge",
      kind: "knowledge",
      judgedBy: `check:${item.check}`,
      baseline: judge(b[i]),
      candidate: judge(c[i]),
    };
  });
  return [...safetyItems, ...generalItems];
}
