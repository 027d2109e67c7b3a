import {
  createRng,
  deriveSeed,
  type GenMessage,
  renderTemplate,
  type Task,
  type TaskFamily,
  type TaskFamilyRegistry,
  taskFamilies,
  taskPrompt,
  teachingTemplates,
} from "@arc/core";

/** One chat example: the prompt messages and the assistant reply to learn. */
export interface ChatExample {
  messages: GenMessage[];
  /** OpenAI `tools` offered with the prompt (a task's recorded context), rendered where the template can. */
  tools?: readonly object[];
  reply: string;
  /** True when the prompt carries a teacher's guidance (adaptive teaching). */
  guided: boolean;
}

/** The hint of a family without a `teachingHint` of its own. */
const GENERIC_TEACHING_HINT =
  "Work out each part of the request in order and check the result before answering.";

/**
 * The short hint for a student whose approach is right: its family's `rightApproachHint` (e.g. the conversions a
 * request leaves to the reader), empty when the family has none. Families are looked up in `families`.
 */
export function rightApproachHint(
  task: Task,
  families: Pick<TaskFamilyRegistry, "find"> = taskFamilies,
): string {
  return families.find(task.env)?.rightApproachHint?.(task) ?? "";
}

/**
 * The full hint for a student whose approach is wrong, guiding without writing the answer: its family's
 * `teachingHint`, else a generic method hint.
 */
export function teachingHint(task: Task, families: Pick<TaskFamilyRegistry, "find"> = taskFamilies): string {
  return families.find(task.env)?.teachingHint?.(task) ?? GENERIC_TEACHING_HINT;
}

/** The guided-student template a family's base model is trained on: its own, else the protocol's default. */
export function guidedStudentTemplate(family: TaskFamily): string {
  return family.guidedTemplate ?? teachingTemplates().studentWithGuidance;
}

/** A guided prompt: the family's prompt with the last user turn replaced by the family's guided-student template. */
export function guidedMessages(family: TaskFamily, task: Task, teaching: string): GenMessage[] {
  const messages: GenMessage[] = family.prompt(task).map((m) => ({ ...m }));
  const last = messages.findLastIndex((m) => m.role === "user");
  const template = guidedStudentTemplate(family);
  messages[last] = { role: "user", content: renderTemplate(template, { question: task.question, teaching }) };
  return messages;
}

/**
 * SFT examples from a family's tasks and reference answers: the first turn, and each later turn of a multi-turn
 * family in the conversation its session replays. A seeded share
 * `guidedFraction` of them carries the full hint in the prompt, so that the student learns to use
 * guidance and a teacher can help it later; when `guidedFraction` is above 0, every task with a
 * `rightApproachHint` also yields a second example guided by it, what a teacher tells a student whose
 * approach is right.
 */
export function sftExamples(
  family: TaskFamily,
  tasks: readonly Task[],
  options: { guidedFraction?: number; seed?: number } = {},
): ChatExample[] {
  const rng = createRng(deriveSeed(options.seed ?? 0, "sft:guided"));
  const fraction = options.guidedFraction ?? 0;
  return tasks.flatMap((task) => {
    const reply = family.reference(task)[0];
    const guided = rng.chance(fraction);
    const prompt = taskPrompt(family, task);
    const example: ChatExample = guided
      ? {
          messages: guidedMessages(family, task, family.teachingHint?.(task) ?? GENERIC_TEACHING_HINT),
          reply,
          guided,
        }
      : { messages: prompt.messages, ...(prompt.tools ? { tools: prompt.tools } : {}), reply, guided };
    const later = laterTurnExamples(family, task);
    const hint = fraction > 0 ? (family.rightApproachHint?.(task) ?? "") : "";
    if (hint === "") return [example, ...later];
    return [example, { messages: guidedMessages(family, task, hint), reply, guided: true }, ...later];
  });
}

/**
 * The examples of a multi-turn task's later turns: the conversation so far (the family's prompt, each earlier
 * reference output and the tool message the family's session answered it with), then that turn's reference output.
 * None for a single-turn family.
 */
function laterTurnExamples(family: TaskFamily, task: Task): ChatExample[] {
  const session = family.session?.(task);
  if (!session) return [];
  const outputs = family.reference(task);
  const messages: GenMessage[] = family.prompt(task).map((m) => ({ ...m }));
  const examples: ChatExample[] = [];
  for (const [turn, output] of outputs.entries()) {
    if (turn > 0) examples.push({ messages: messages.map((m) => ({ ...m })), reply: output, guided: false });
    const step = session.act(output);
    messages.push({ role: "assistant", content: output }, { role: "tool", content: step.observation });
    if (step.done) break;
  }
  return examples;
}
