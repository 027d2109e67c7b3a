import {
  createRng,
  deriveSeed,
  renderTemplate,
  type Task,
  type TaskFamily,
  type ToolcallSolution,
  taskPrompt,
  teachingTemplates,
  toolcallConversions,
} from "@arc/core";
import type { ChatMessage } from "../run/engine-factory.ts";

/** One chat example: the prompt messages and the assistant reply to learn. */
export interface ChatExample {
  messages: ChatMessage[];
  /** OpenAI `tools` offered with the prompt (a task's recorded context), rendered where the template can. */
  tools?: readonly object[];
  reply: string;
  /** True when the prompt carries a teacher's guidance (adaptive teaching). */
  guided: boolean;
}

/**
 * The short hint for a student whose approach is right: for `toolcall`, the conversions the request
 * leaves to the reader ("March is month 03; 3pm is hour 15."), empty when there are none or for another family.
 */
export function conversionHint(task: Task): string {
  if (task.env !== "toolcall") return "";
  const facts = toolcallConversions(task);
  return facts.length === 0 ? "" : `${facts.join("; ")}.`;
}

/**
 * The full hint for a student whose approach is wrong, guiding without writing the call: for `toolcall`,
 * which tool, which argument names and the request's conversions; for other families, a generic method hint.
 */
export function teachingHint(task: Task): string {
  if (task.env === "toolcall") {
    const call = task.solution as ToolcallSolution;
    const method = `Call the tool ${call.tool} with the arguments ${Object.keys(call.args).join(", ")}, taken from the request.`;
    const conversions = conversionHint(task);
    return conversions === "" ? method : `${method} ${conversions}`;
  }
  return "Work out each part of the request in order and check the result before answering.";
}

/**
 * The guided-student prompt of `toolcall`: the hint first, then the request, so the values the call copies stay as
 * close to the answer as in the unguided prompt. A ~1M-parameter student copies over a short distance only: trained
 * on the default template (request, hint, solve instruction), the same student passed 0 of 106 third-phrasing
 * requests with the conversions hinted, 0.15 without; trained on this one, 0.23 with them, 0.20 without.
 */
export const TOOLCALL_GUIDED_STUDENT_TEMPLATE = "Hint: {teaching}\n{question}";

/** The guided-student template the base model of family `env` is trained on (the protocol's default for all but toolcall). */
export function guidedStudentTemplate(env: string): string {
  return env === "toolcall" ? TOOLCALL_GUIDED_STUDENT_TEMPLATE : teachingTemplates().studentWithGuidance;
}

/** A guided prompt: the family's prompt with the last user turn replaced by the family's guided-student template. */
export function guidedMessages(family: TaskFamily, task: Task, teaching: string): ChatMessage[] {
  const messages: ChatMessage[] = family.prompt(task).map((m) => ({ ...m }));
  const last = messages.findLastIndex((m) => m.role === "user");
  const template = guidedStudentTemplate(family.env);
  messages[last] = { role: "user", content: renderTemplate(template, { question: task.question, teaching }) };
  return messages;
}

/**
 * SFT examples from a family's tasks and reference answers: the first turn, and each later turn of a multi-turn
 * family in the conversation its session replays. A seeded share
 * `guidedFraction` of them carries the full hint in the prompt, so that the student learns to use
 * guidance and a teacher can help it later; when `guidedFraction` is above 0, every task whose request
 * needs conversions also yields a second example guided by the short `conversionHint`, what a teacher
 * tells a student whose approach is right.
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
      ? { messages: guidedMessages(family, task, teachingHint(task)), reply, guided }
      : { messages: prompt.messages, ...(prompt.tools ? { tools: prompt.tools } : {}), reply, guided };
    const later = laterTurnExamples(family, task);
    const conversions = fraction > 0 ? conversionHint(task) : "";
    if (conversions === "") return [example, ...later];
    return [example, { messages: guidedMessages(family, task, conversions), reply, guided: true }, ...later];
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
  const messages: ChatMessage[] = family.prompt(task).map((m) => ({ ...m }));
  const examples: ChatExample[] = [];
  for (const [turn, output] of outputs.entries()) {
    if (turn > 0) examples.push({ messages: messages.map((m) => ({ ...m })), reply: output, guided: false });
    const step = session.act(output);
    messages.push({ role: "assistant", content: output }, { role: "tool", content: step.observation });
    if (step.done) break;
  }
  return examples;
}
