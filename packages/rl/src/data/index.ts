export { batchAt, epochPermutation, itemAt } from "./prompt-order.ts";
export {
  type ChatExample,
  conversionHint,
  guidedMessages,
  sftExamples,
  teachingHint,
} from "./sft-examples.ts";
