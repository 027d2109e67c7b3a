import type { ChatCompletion, ChatModel, CompleteOptions, Task, TeachMessage } from "@arc/core";
import type { ConversionsTold } from "../../teach/family-teaching.ts";
import { toolcallTeacherReply } from "./toolcall-teaching.ts";

/**
 * The rule a trained `toolcall` teacher imitates, as a ChatModel: reads the question and the student's
 * approach back out of the TOOLCALL_TEACHING_TEMPLATES teacher prompt and answers with the reference
 * teacher output for them. It reads the task's solution, so it is not a deployable teacher: it measures
 * the most a learned teacher could reach with this student (bench:teaching) and stands in for a perfectly
 * trained one in tests.
 */
export class ReferenceToolcallTeacher implements ChatModel {
  /** The name recorded on trace steps. */
  readonly model = "reference-teacher";

  constructor(
    private readonly tasks: readonly Task[],
    /** Which students whose probe opens the right call it tells their request's conversions (default: none). */
    private readonly told: ConversionsTold = [],
  ) {}

  async complete(messages: TeachMessage[], _options: CompleteOptions): Promise<ChatCompletion> {
    const prompt = messages[messages.length - 1].content;
    const match = /^Request: ([\s\S]*?)\nStudent's approach: ([\s\S]*?)\nDiagnose/.exec(prompt);
    const task = this.tasks.find((t) => t.question === match?.[1]);
    if (!task || !match) throw new Error(`not a toolcall teacher prompt: ${prompt.slice(0, 80)}`);
    const text = toolcallTeacherReply(task, match[2], this.told).reply;
    return { text, promptTokens: prompt.length, completionTokens: text.length, finishReason: "stop" };
  }
}
