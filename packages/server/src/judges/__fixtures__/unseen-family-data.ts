import { answerTrace, type Task, toOpenAiTools } from "@arc/core";
import { orderdeskFamily } from "@arc/core/families";
import type { LabelledTrace } from "./toolcall-judge-data.ts";

/** The family whose tools the shipped `toolcall` judge never saw: an order desk's lookups, refunds and cancellations. */
export const UNSEEN_FAMILY = orderdeskFamily.env;

const TOOLS = toOpenAiTools(orderdeskFamily.tools ?? []);

/** Another action than the desk's policy allows for `task`, on the same order: the answer that must fail. */
function wrongAction(task: Task, right: { tool: string }, k: number): string {
  const { order } = task.solution as { order: { id: string; total: number } };
  const wrong = [
    { tool: "decline", args: { order_id: order.id } },
    { tool: "refund_order", args: { order_id: order.id, amount: order.total } },
    { tool: "cancel_order", args: { order_id: order.id } },
  ].filter((call) => call.tool !== right.tool);
  return JSON.stringify(wrong[k % wrong.length]);
}

/**
 * Answers of an order-desk agent, labelled by the family's own verifier: for each production task (`seed`), the
 * agent looked the order up (the conversation holds the call and the desk's answer), then acted, by the desk's
 * policy in even tasks and with another action in odd ones. A judge that never saw the desk's tools is measured on
 * them as a new user would measure it: against the verifier, on answers it has no training for.
 */
export function unseenFamilyLabelledTraces(seed: number, count: number): LabelledTrace[] {
  const tasks = orderdeskFamily.generate({ split: "production", seed, count });
  return tasks.flatMap((task, k) => {
    const [lookup, action] = orderdeskFamily.reference(task);
    const session = orderdeskFamily.session(task, {});
    const { observation } = session.act(lookup);
    const call = JSON.parse(lookup) as { tool: string; args: unknown };
    const messages = [
      { role: "user", content: task.question },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_lookup",
            type: "function",
            function: { name: call.tool, arguments: JSON.stringify(call.args) },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_lookup", content: observation },
    ];
    const answer = k % 2 === 0 ? action : wrongAction(task, JSON.parse(action), k >> 1);
    const verdict = orderdeskFamily.verify?.({ outputs: [lookup, answer], solution: task.solution });
    if (!verdict || verdict.status === "unknown") return [];
    const trace = { ...answerTrace(messages, TOOLS, answer), env: UNSEEN_FAMILY };
    const failed = verdict.status === "fail";
    return [
      {
        trace,
        label: failed ? { failed, class: verdict.failure?.class } : { failed },
        evidence: (JSON.parse(answer) as { tool: string }).tool,
      },
    ];
  });
}
