export { batchAt, epochPermutation, itemAt } from "./prompt-order.ts";
export {
  type ChatExample,
  guidedMessages,
  rightApproachHint,
  sftExamples,
  teachingHint,
} from "./sft-examples.ts";
