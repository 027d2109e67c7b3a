import {
  createRng,
  deriveSeed,
  renderTemplate,
  type Task,
  type TaskFamily,
  type ToolcallSolution,
  teachingTemplates,
} from "@arc/core";
import type { ChatMessage } from "../run/engine-factory.ts";

/** One chat example: the prompt messages and the assistant reply to learn. */
export interface ChatExample {
  messages: ChatMessage[];
  reply: string;
  /** True when the prompt carries a teacher's guidance (adaptive teaching, issue 7). */
  guided: boolean;
}

/**
 * A teacher-style hint that guides without giving the answer: for `toolcall`, which tool and which
 * argument names (never their values); for other families, a generic method hint.
 */
export function teachingHint(task: Task): string {
  if (task.env === "toolcall") {
    const call = task.solution as ToolcallSolution;
    return `Call the tool ${call.tool} with the arguments ${Object.keys(call.args).join(", ")}, taken from the request.`;
  }
  return "Work out each part of the request in order and check the result before answering.";
}

/** A guided prompt: the family's prompt with the last user turn replaced by the guided-student template. */
export function guidedMessages(family: TaskFamily, task: Task, teaching: string): ChatMessage[] {
  const messages: ChatMessage[] = family.prompt(task).map((m) => ({ ...m }));
  const last = messages.findLastIndex((m) => m.role === "user");
  const template = teachingTemplates().studentWithGuidance;
  messages[last] = { role: "user", content: renderTemplate(template, { question: task.question, teaching }) };
  return messages;
}

/**
 * SFT examples from a family's tasks and reference answers (first turn). A seeded share
 * `guidedFraction` of them carries a `<teaching>`-style hint in the prompt, so that the student learns
 * to use guidance and a teacher can help it later.
 */
export function sftExamples(
  family: TaskFamily,
  tasks: readonly Task[],
  options: { guidedFraction?: number; seed?: number } = {},
): ChatExample[] {
  const rng = createRng(deriveSeed(options.seed ?? 0, "sft:guided"));
  const fraction = options.guidedFraction ?? 0;
  return tasks.map((task) => {
    const reply = family.reference(task)[0];
    const guided = rng.chance(fraction);
    const messages = guided ? guidedMessages(family, task, teachingHint(task)) : family.prompt(task);
    return { messages, reply, guided };
  });
}
