export { batchAt, epochPermutation, itemAt } from "./prompt-order.ts";
export { type ChatExample, guidedMessages, sftExamples, teachingHint } from "./sft-examples.ts";
