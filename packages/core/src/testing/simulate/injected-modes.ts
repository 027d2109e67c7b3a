import type { ArithSolution } from "../../families/arith/arith-tasks.ts";
import type { OrderdeskSolution } from "../../families/orderdesk/orderdesk.ts";
import type { ToolcallSolution } from "../../families/toolcall/toolcall-tasks.ts";
import type { Task } from "../../rollout/index.ts";
import type { Rng } from "../../tasks/rng.ts";

/** How a simulated model turn ended, as it would appear on an LLM step. */
export interface SimulatedTurn {
  text: string;
  finishReason?: "stop" | "length";
  /** The call failed instead of answering (a time-out, a 5xx). */
  error?: { message: string; type?: string; status?: number };
  latencyMs?: number;
}

/** A known failure mode a harness can inject into simulated production traffic, to test detection and clustering. */
export interface InjectedMode {
  /** Names the mode the way a pattern label should, e.g. `wrong_argument: get_weather.unit`. */
  id: string;
  /** The env ids whose tasks the mode can hit. */
  envs: readonly string[];
  /** Whether the mode can hit this task (e.g. only booking requests). */
  applies(task: Task): boolean;
  /** The model's turns under this failure, given the correct ones. */
  turns(task: Task, correct: string[], rng: Rng): SimulatedTurn[];
  /** Negative feedback the user leaves on the trace, if the mode is a user complaint. */
  feedbackLabel?: string;
}

const call = (tool: string, args: Record<string, unknown>) => JSON.stringify({ tool, args });
const tc = (task: Task) => task.solution as ToolcallSolution;
const isTool = (tool: string) => (task: Task) => task.env === "toolcall" && tc(task).tool === tool;

function nextDay(iso: string): string {
  const d = new Date(`${iso}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

const REFUSALS = [
  "I'm sorry, I can't help with currency conversion.",
  "I'm sorry, but I cannot assist with that request.",
  "I am unable to convert currencies.",
];

const BOOKING_REFUSALS = [
  "I'm sorry, I can't make reservations.",
  "Sorry, I am unable to book tables for you.",
];

/** The failure modes the simulated production agent shows, each tied to a realistic cause. */
export const INJECTED_MODES: readonly InjectedMode[] = [
  {
    id: "wrong_tool: book_table→add_event",
    envs: ["toolcall"],
    applies: isTool("book_table"),
    turns: (t) => [
      { text: call("add_event", { title: tc(t).args.place, date: tc(t).args.date, time: "19:00" }) },
    ],
  },
  {
    id: "wrong_argument: get_weather.unit",
    envs: ["toolcall"],
    applies: isTool("get_weather"),
    turns: (t) => [
      { text: call("get_weather", { ...tc(t).args, unit: tc(t).args.unit === "c" ? "f" : "c" }) },
    ],
  },
  {
    id: "wrong_argument: add_event.date",
    envs: ["toolcall"],
    applies: isTool("add_event"),
    turns: (t) => [{ text: call("add_event", { ...tc(t).args, date: nextDay(String(tc(t).args.date)) }) }],
  },
  {
    id: "parse_error: unclosed JSON",
    envs: ["toolcall"],
    applies: isTool("convert_currency"),
    turns: (_t, correct) => [{ text: correct[0].slice(0, -1) }],
  },
  {
    id: "schema_violation: book_table.people",
    envs: ["toolcall"],
    applies: isTool("book_table"),
    turns: (t) => [{ text: call("book_table", { ...tc(t).args, people: String(tc(t).args.people) }) }],
  },
  {
    id: "execution_error: convert_currency (YEN)",
    envs: ["toolcall"],
    applies: (t) => isTool("convert_currency")(t) && (tc(t).args.to === "JPY" || tc(t).args.from === "JPY"),
    turns: (t) => {
      const a = tc(t).args;
      return [
        {
          text: call("convert_currency", {
            ...a,
            from: a.from === "JPY" ? "YEN" : a.from,
            to: a.to === "JPY" ? "YEN" : a.to,
          }),
        },
      ];
    },
  },
  {
    id: "refusal: currency requests",
    envs: ["toolcall"],
    applies: isTool("convert_currency"),
    turns: (_t, _c, rng) => [{ text: rng.pick(REFUSALS) }],
  },
  {
    id: "refusal: booking requests",
    envs: ["toolcall"],
    applies: isTool("book_table"),
    turns: (_t, _c, rng) => [{ text: rng.pick(BOOKING_REFUSALS) }],
  },
  {
    id: "truncation: add_event",
    envs: ["toolcall"],
    applies: isTool("add_event"),
    turns: (_t, correct) => [{ text: correct[0].slice(0, 48), finishReason: "length" }],
  },
  {
    id: "empty_output",
    envs: ["toolcall"],
    applies: isTool("get_weather"),
    turns: () => [{ text: "" }],
  },
  {
    id: "wrong_answer: calc",
    envs: ["arith"],
    applies: (t) => t.env === "arith",
    turns: (t) => [{ text: call("calc", { expr: `${(t.solution as ArithSolution).expr}+1` }) }],
  },
  {
    id: "parse_error: prose answer",
    envs: ["arith"],
    applies: (t) => t.env === "arith",
    turns: (t) => [{ text: `The answer is ${(t.solution as ArithSolution).answer}.` }],
  },
  {
    id: "tool_loop: lookup_order",
    envs: ["orderdesk"],
    applies: (t) => t.env === "orderdesk",
    turns: (_t, correct) => [correct[0], correct[0], correct[0], correct[0]].map((text) => ({ text })),
  },
  {
    id: "wrong_argument: refund_order.amount",
    envs: ["orderdesk"],
    applies: (t) =>
      t.env === "orderdesk" && (t.solution as OrderdeskSolution).calls[1].tool === "refund_order",
    turns: (t, correct) => {
      const s = t.solution as OrderdeskSolution;
      return [
        { text: correct[0] },
        { text: call("refund_order", { order_id: s.order.id, amount: Math.floor(s.order.total / 2) }) },
      ];
    },
  },
  {
    id: "wrong_tool: acted before lookup_order",
    envs: ["orderdesk"],
    applies: (t) => t.env === "orderdesk",
    turns: (_t, correct) => [{ text: correct[1] }],
  },
  {
    id: "timeout",
    envs: ["toolcall", "arith", "orderdesk"],
    applies: () => true,
    turns: () => [
      {
        text: "",
        error: { message: "Request timed out after 30000 ms", type: "timeout", status: 408 },
        latencyMs: 30_000,
      },
    ],
  },
  {
    id: "latency_over_budget",
    envs: ["toolcall", "arith"],
    applies: (t) => t.env !== "orderdesk",
    turns: (_t, correct, rng) => [{ text: correct[0], latencyMs: rng.int(12_000, 20_000) }],
  },
  {
    id: "user_feedback: thumbs_down",
    envs: ["toolcall", "arith"],
    applies: (t) => t.env !== "orderdesk",
    turns: (_t, correct) => [{ text: correct[0] }],
    feedbackLabel: "thumbs_down",
  },
];
