import { type Task, toOpenAiTools, toolCallArguments } from "@arc/core";
import type { ChatTokenizer } from "@arc/engine";
import { createArc } from "@arc/sdk";
import OpenAI from "openai";
import { DEMO_FAMILY } from "./demo-family.ts";

/** Where the simulated agent sends its calls and its traces. */
export interface ProductionAgentOptions {
  /** The Arc server (without `/v1`): the gateway for the model calls and the ingest API for the SDK's traces. */
  serverUrl: string;
  /** The tenant key (the gateway and the SDK both take it). */
  apiKey: string;
  /** The production tasks it works through, in order, wrapping around. */
  tasks: readonly Task[];
  /** Conversations started per second at most (bounded so that training keeps a core); `setRate` changes it. */
  ratePerSecond: number;
  /** Conversations in flight at most. */
  maxInFlight?: number;
  /** Output budget per call (default 96: the longest reference answer of the demo family is 84 byte tokens). */
  maxTokens?: number;
  /** How long a call may take before the client gives up on it (default 30 s). */
  timeoutMs?: number;
}

/** What the agent has done so far. */
export interface AgentStats {
  sent: number;
  answered: number;
  /** Answers that called a tool (`tool_calls`) whose arguments are a JSON object, as the agent needs to run it. */
  toolCalls: number;
  /** Answers without a usable call: text, or a call whose arguments are not a JSON object. */
  unusable: number;
  /** Calls that threw (HTTP error or network): the agent logs them and goes on, as a production agent would. */
  errors: number;
  lastError?: string;
}

/** The demo family's tools, as the agent offers them. */
const TOOLS = toOpenAiTools(DEMO_FAMILY.tools ?? []) as unknown as OpenAI.ChatCompletionTool[];

/** The agent's longest prompt among `tasks`, in tokens of a checkpoint's chat template, the tools it offers included. */
export function longestAgentPrompt(tokenizer: ChatTokenizer, tasks: readonly Task[]): number {
  const tools = TOOLS as unknown as object[];
  return Math.max(...tasks.map((task) => tokenizer.render(DEMO_FAMILY.prompt(task), { tools }).length));
}

/** Whether a tool call names a function and carries a JSON object of arguments, so the agent could run it. */
function usableCall(call: OpenAI.ChatCompletionMessageToolCall | undefined): boolean {
  return call?.type === "function" && toolCallArguments(call.function.arguments) !== undefined;
}

function checkRate(ratePerSecond: number): void {
  if (!(ratePerSecond > 0))
    throw new Error(`ratePerSecond: expected a positive number, got ${ratePerSecond}`);
}

/**
 * A simulated production agent: the official `openai` client, wrapped by `@arc/sdk`, pointed at Arc's gateway,
 * answering the demo family's production split (its prompt of each task, with the family's tools offered as
 * OpenAI `tools`) one conversation at a time at a bounded rate. It reads the model's `tool_calls` as an agent would
 * before running the tool. Every call is traced by the SDK and routed (and traced) by the gateway; the SDK sends its
 * trace and step ids so both land in one trace.
 */
export class ProductionAgent {
  readonly stats: AgentStats = { sent: 0, answered: 0, toolCalls: 0, unusable: 0, errors: 0 };
  private readonly arc;
  private readonly openai;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = new Set<Promise<void>>();
  private next = 0;

  private ratePerSecond: number;

  constructor(private readonly options: ProductionAgentOptions) {
    if (options.tasks.length === 0) throw new Error("tasks: expected at least one production task, got none");
    checkRate(options.ratePerSecond);
    this.ratePerSecond = options.ratePerSecond;
    this.arc = createArc({ baseUrl: options.serverUrl, apiKey: options.apiKey, flushIntervalMs: 250 });
    this.openai = this.arc.wrapOpenAI(
      new OpenAI({
        baseURL: `${options.serverUrl}/v1`,
        apiKey: options.apiKey,
        maxRetries: 0,
        timeout: options.timeoutMs ?? 30_000,
      }),
    );
  }

  /** Starts sending; calls continue until `stop`. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), 1000 / this.ratePerSecond);
  }

  /** Changes how many conversations a second it starts from now on. */
  setRate(ratePerSecond: number): void {
    checkRate(ratePerSecond);
    this.ratePerSecond = ratePerSecond;
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.start();
  }

  /** Stops starting conversations, waits for those in flight, and flushes the SDK's traces. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all(this.inFlight);
    await this.arc.shutdown({ timeoutMs: 5000 });
  }

  private tick(): void {
    if (this.inFlight.size >= (this.options.maxInFlight ?? 8)) return;
    const task = this.options.tasks[this.next % this.options.tasks.length];
    const conversation = `conv-${this.next}`;
    this.next++;
    const call = this.converse(task, conversation).finally(() => this.inFlight.delete(call));
    this.inFlight.add(call);
  }

  private async converse(task: Task, conversation: string): Promise<void> {
    this.stats.sent++;
    try {
      const reply = await this.arc.trace(
        `${DEMO_FAMILY.env}-agent`,
        () =>
          this.openai.chat.completions.create(
            {
              model: "arc",
              messages: DEMO_FAMILY.prompt(task) as OpenAI.ChatCompletionMessageParam[],
              tools: TOOLS,
              temperature: 0,
              max_tokens: this.options.maxTokens ?? 96,
            },
            { headers: { "x-arc-env": DEMO_FAMILY.env, "x-arc-session": conversation } },
          ),
        { env: DEMO_FAMILY.env, sessionId: conversation, input: task.question },
      );
      this.stats.answered++;
      if (usableCall(reply.choices[0]?.message.tool_calls?.[0])) this.stats.toolCalls++;
      else this.stats.unusable++;
    } catch (error) {
      this.stats.errors++;
      this.stats.lastError = error instanceof Error ? error.message : String(error);
    }
  }
}
