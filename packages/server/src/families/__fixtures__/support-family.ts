/** A support agent's task family as data, as tests send it: one tool, the amount compared to within a tenth of a cent. */
export const SUPPORT_FAMILY_SPEC = {
  env: "support",
  description: "refunds from a support chat",
  system: "You are a support agent. Answer with one tool call.",
  tools: [
    {
      name: "refund",
      description: "Refund an order",
      parameters: {
        type: "object",
        properties: { order_id: { type: "string" }, amount: { type: "number" } },
        required: ["order_id", "amount"],
        additionalProperties: false,
      },
    },
  ],
  verifier: { arguments: { amount: "number" }, tolerance: 0.001 },
};
