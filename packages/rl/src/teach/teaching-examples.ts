import {
  approximateTokenCounter,
  type ChatModel,
  createRng,
  type Diagnosis,
  deriveSeed,
  type Task,
  type TeachingTemplatesInput,
  type TeachMessage,
  type TokenCounter,
  teachingTemplates,
  truncateProbe,
} from "@arc/core";
import type { ConversionsTold, FamilyTeaching } from "./family-teaching.ts";
import { probeMessages, teacherMessages } from "./teacher-messages.ts";

/** One SFT example of the teacher: what it is shown and what it should answer. */
export interface TeachingExample {
  /** The task the student was probed on. */
  task: Task;
  /** The probe as the teacher sees it (held to maxProbeTokens). */
  approach: string;
  /** `student`: the frozen student's own probe; `synthetic`: the opening of a reference call, for balance. */
  source: "student" | "synthetic";
  /** What the teacher should conclude. */
  diagnosis: Diagnosis;
  /** The guidance it should give: empty (or the conversions) for a strong student, the hint for a weak one. */
  teaching: string;
  /** The teacher's prompt (adaptive mode). */
  messages: TeachMessage[];
  /** The teacher output to learn: `<thinking>… Diagnosis: x</thinking><teaching>…</teaching>`. */
  reply: string;
}

/** Options of `generateTeachingExamples`. */
export interface TeachingExampleOptions {
  /** Tasks of the taught family to probe the student on. */
  tasks: readonly Task[];
  /** The family's teaching: its reference teacher labels each probe. */
  teaching: FamilyTeaching;
  /** The frozen student whose probes the teacher learns to read. */
  student: ChatModel;
  /** Protocol templates (the probe budget among them); callers pass the family teaching's own. */
  templates?: TeachingTemplatesInput;
  /** Counts probe tokens in the student's units (default approximateTokenCounter). */
  tokenCounter?: TokenCounter;
  /** Sampled probes per task besides the greedy one (default 1), so the teacher sees the student's spread. */
  sampledProbes?: number;
  /** Temperature of the sampled probes (default 1). */
  temperature?: number;
  /** Share of tasks that also get one synthetic probe, half of them another tool's opening (default 0.5). */
  syntheticShare?: number;
  /** Seed of the synthetic choices. */
  seed?: number;
  /** Most student calls in flight (default 32). */
  concurrency?: number;
  /** Which students whose probe opens the right call the labels tell their request's conversions (default none). */
  conversionsTold?: ConversionsTold;
}

async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Teacher SFT data for a family: the frozen student is probed on each task (greedy, plus sampled probes), and each
 * probe is labelled by the family's reference teacher (`teaching.teacherReply`): nothing, or only the request's
 * conversions (`conversionsTold`), when the probe starts the right approach, the full hint when it does not — never
 * the answer itself. Synthetic probes (the opening of the task's reference answer, or of another approach's) keep
 * both diagnoses represented when the student is mostly right or wrong.
 */
export async function generateTeachingExamples(options: TeachingExampleOptions): Promise<TeachingExample[]> {
  const templates = teachingTemplates(options.templates);
  const counter = options.tokenCounter ?? approximateTokenCounter;
  const budget = templates.maxProbeTokens;
  const sampled = options.sampledProbes ?? 1;
  const rng = createRng(deriveSeed(options.seed ?? 0, "teach:examples"));
  const wanted: { task: Task; temperature: number }[] = options.tasks.flatMap((task) => [
    { task, temperature: 0 },
    ...Array.from({ length: sampled }, () => ({ task, temperature: options.temperature ?? 1 })),
  ]);
  const probes = await mapLimited(wanted, options.concurrency ?? 32, async ({ task, temperature }) => {
    const reply = await options.student.complete(probeMessages(templates, task.question), {
      maxTokens: budget,
      temperature,
    });
    return truncateProbe(reply.text, budget, { reportedTokens: reply.completionTokens, counter }).approach;
  });

  const example = (task: Task, approach: string, source: TeachingExample["source"]): TeachingExample => {
    const labelled = options.teaching.teacherReply(task, approach, options.conversionsTold);
    return {
      task,
      approach,
      source,
      diagnosis: labelled.diagnosis,
      teaching: labelled.teaching,
      messages: teacherMessages(templates, "adaptive", task.question, approach),
      reply: labelled.reply,
    };
  };
  const examples = wanted.map(({ task }, i) => example(task, probes[i], "student"));
  const share = options.syntheticShare ?? 0.5;
  for (const task of options.tasks) {
    if (!rng.chance(share)) continue;
    const others = options.tasks.filter((t) => !options.teaching.sameApproach(t, task));
    const source = rng.chance(0.5) && others.length > 0 ? rng.pick(others) : task;
    const opening = counter.truncate(options.teaching.referenceText(source), budget);
    examples.push(example(task, opening, "synthetic"));
  }
  return examples;
}
