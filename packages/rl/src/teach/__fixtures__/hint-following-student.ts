import {
  type ChatCompletion,
  type ChatModel,
  type CompleteOptions,
  formatToolCall,
  type Task,
  type TeachMessage,
} from "@arc/core";
import { TOOLCALL_GUIDED_STUDENT_TEMPLATE, type ToolcallSolution } from "@arc/core/families";

const [GUIDED_PREFIX, GUIDED_SUFFIX] = TOOLCALL_GUIDED_STUDENT_TEMPLATE.split("{teaching}");

/**
 * Test double of a frozen toolcall student whose behaviour under guidance is known in advance (a real
 * student that reliably uses hints takes minutes of training, too slow for a unit test). It reads guidance from
 * toolcall's guided-student prompt (TOOLCALL_GUIDED_STUDENT_TEMPLATE) and answers
 * every task with the reference call of the tool it believes in: the tool named by the guidance when
 * there is one, else `unguidedTool(task)`. Its probe is the opening of that call. Guidance that names
 * no tool makes it right exactly when `otherGuidance(text)` says so (default: it ignores such guidance).
 * Counts its calls.
 */
export class HintFollowingStudentTestDouble implements ChatModel {
  /** The name recorded on trace steps. */
  readonly model = "hint-following-student";
  /** Calls received, for cache assertions. */
  calls = 0;

  constructor(
    private readonly tasks: readonly Task[],
    private readonly unguidedTool: (task: Task) => string,
    private readonly otherGuidance?: (guidance: string) => boolean,
  ) {}

  async complete(messages: TeachMessage[], options: CompleteOptions): Promise<ChatCompletion> {
    this.calls++;
    const prompt = messages[messages.length - 1].content;
    const task = this.tasks.find((t) => prompt.includes(t.question));
    if (!task) throw new Error(`no task in prompt ${JSON.stringify(prompt.slice(0, 80))}`);
    const expected = task.solution as ToolcallSolution;
    const suffix = GUIDED_SUFFIX.replace("{question}", task.question);
    const guidance =
      prompt.startsWith(GUIDED_PREFIX) && prompt.endsWith(suffix)
        ? prompt.slice(GUIDED_PREFIX.length, prompt.length - suffix.length)
        : undefined;
    const named = guidance === undefined ? undefined : /Call the tool (\w+)/.exec(guidance)?.[1];
    let tool = named ?? this.unguidedTool(task);
    if (guidance !== undefined && named === undefined && this.otherGuidance)
      tool = this.otherGuidance(guidance) ? expected.tool : "no_tool";
    const call = tool === expected.tool ? expected : { tool, args: expected.args };
    const text = formatToolCall(call).slice(0, options.maxTokens);
    return { text, promptTokens: prompt.length, completionTokens: text.length, finishReason: "stop" };
  }
}
