import type { JsonSchema } from "../../tasks/json-schema.ts";
import type { FamilyTool } from "../../tasks/task-family.ts";

const orderId: JsonSchema = { type: "string", pattern: "^[A-Z]\\d{3,4}$", description: "e.g. A123" };

function params(extra: Record<string, JsonSchema> = {}): JsonSchema {
  return {
    type: "object",
    properties: { order_id: orderId, ...extra },
    required: ["order_id", ...Object.keys(extra)],
    additionalProperties: false,
  };
}

/** The schemas of the order desk's tools, by name. `lookup_order` reads; the others end the episode. */
export const ORDERDESK_TOOL_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  lookup_order: params(),
  refund_order: params({ amount: { type: "number", minimum: 0 } }),
  cancel_order: params(),
  change_address: params({ address: { type: "string", minLength: 1 } }),
  decline: params(),
};

/** The tools that act on an order and so end the episode. */
export const ORDERDESK_ACTIONS: readonly string[] = [
  "refund_order",
  "cancel_order",
  "change_address",
  "decline",
];

/** The order desk's tools as its agent is offered them. */
export const ORDERDESK_TOOLS: readonly FamilyTool[] = [
  { name: "lookup_order", description: "Read an order: its status, total and address." },
  { name: "refund_order", description: "Refund part or all of a delivered order's total; ends the request." },
  { name: "cancel_order", description: "Cancel an order that has not shipped; ends the request." },
  {
    name: "change_address",
    description: "Change the address of an order that has not shipped; ends the request.",
  },
  { name: "decline", description: "Refuse a request the order's state does not allow; ends the request." },
].map((tool) => ({ ...tool, parameters: ORDERDESK_TOOL_SCHEMAS[tool.name] }));
