import { validateJsonSchema } from "../../tasks/json-schema.ts";
import { parseToolCall } from "../../tasks/parse-tool-call.ts";
import type { FamilySession, FamilySessionStep } from "../../tasks/task-family.ts";
import type { ToolCallJson } from "../../tasks/tool-spec.ts";
import { applyAction, type Order, type OrderdeskSolution } from "./orderdesk.ts";
import { ORDERDESK_ACTIONS, ORDERDESK_TOOL_SCHEMAS } from "./orderdesk-tools.ts";

/** How a turn's output was taken: a valid call, or why it could not be run. */
export type TurnOutcome =
  | { kind: "call"; call: ToolCallJson; error?: string }
  | { kind: "parse_error"; error: string }
  | { kind: "schema_violation"; tool?: string; path: string; error: string }
  | { kind: "unknown_tool"; tool: string };

/** What one turn gave back to the agent. */
export interface SessionStep extends FamilySessionStep {
  outcome: TurnOutcome;
}

/** Default turn limit of an order-desk episode: lookup, action, and two turns of slack. */
export const ORDERDESK_MAX_TURNS = 4;

/**
 * The order desk as a pure state machine: feed it the model's outputs one at a time; it runs the tools
 * against its one-order database and tells what the agent sees. The environment and the verifier share it,
 * so training reward and production verdicts can never disagree.
 */
export class OrderdeskSession implements FamilySession {
  /** The order as it is now. */
  state: Order;
  /** Valid calls made so far, in order. */
  readonly calls: ToolCallJson[] = [];
  /** Outcome of every turn, in order. */
  readonly outcomes: TurnOutcome[] = [];
  /** True once `lookup_order` found the order. */
  lookedUp = false;
  /** True once a valid action tool was called before any lookup. */
  actedBeforeLookup = false;
  done = false;

  constructor(
    readonly solution: OrderdeskSolution,
    readonly maxTurns = ORDERDESK_MAX_TURNS,
  ) {
    this.state = { ...solution.order };
  }

  /** Runs one model output. Throws if the episode is already over. */
  act(output: string): SessionStep {
    if (this.done) throw new Error("the episode is over: reset before acting again");
    const step = this.run(output);
    this.outcomes.push(step.outcome);
    if (this.outcomes.length >= this.maxTurns) step.done = true;
    this.done = step.done;
    return step;
  }

  private run(output: string): SessionStep {
    const parsed = parseToolCall(output);
    if (!parsed.ok) {
      const outcome: TurnOutcome =
        parsed.stage === "json"
          ? { kind: "parse_error", error: parsed.error }
          : { kind: "schema_violation", path: "(call)", error: parsed.error };
      return { observation: JSON.stringify({ error: "invalid tool call" }), done: true, outcome };
    }
    const { call } = parsed;
    const schema = ORDERDESK_TOOL_SCHEMAS[call.tool];
    if (!schema) {
      return {
        observation: JSON.stringify({ error: `unknown tool ${call.tool}` }),
        done: true,
        outcome: { kind: "unknown_tool", tool: call.tool },
      };
    }
    const issue = validateJsonSchema(call.args, schema)[0];
    if (issue) {
      const outcome: TurnOutcome = {
        kind: "schema_violation",
        tool: call.tool,
        path: issue.path,
        error: issue.message,
      };
      return {
        observation: JSON.stringify({ error: `${issue.path} ${issue.message}` }),
        done: true,
        outcome,
      };
    }
    this.calls.push(call);
    if (call.args.order_id !== this.state.id) {
      return this.reply(call, { error: "order not found" }, !this.isLookup(call));
    }
    if (this.isLookup(call)) {
      this.lookedUp = true;
      const { id, status, total } = this.state;
      return this.reply(call, { id, status, total }, false);
    }
    if (!this.lookedUp) this.actedBeforeLookup = true;
    const refusal = this.policyError(call);
    if (refusal) return this.reply(call, { error: refusal }, true);
    this.state = applyAction(this.state, call);
    return this.reply(call, { ok: true }, true);
  }

  private isLookup(call: ToolCallJson): boolean {
    return !ORDERDESK_ACTIONS.includes(call.tool);
  }

  private policyError(call: ToolCallJson): string | undefined {
    const { status, total } = this.state;
    if (call.tool === "refund_order") {
      if (status !== "delivered") return `cannot refund a ${status} order`;
      if (Number(call.args.amount) > total) return "amount exceeds the order total";
    }
    if (call.tool === "cancel_order" && status !== "pending") return `cannot cancel a ${status} order`;
    if (call.tool === "change_address" && status !== "pending" && status !== "shipped") {
      return `cannot change the address of a ${status} order`;
    }
    return undefined;
  }

  private reply(call: ToolCallJson, result: Record<string, unknown>, done: boolean): SessionStep {
    const error = typeof result.error === "string" ? result.error : undefined;
    return {
      observation: JSON.stringify(result),
      done,
      toolCall: call,
      outcome: { kind: "call", call, error },
    };
  }
}
