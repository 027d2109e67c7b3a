export {
  assertChatExample,
  type ChatExample,
  chatExampleOf,
  chatExamplesFromPreferences,
  hasReference,
} from "./chat-example.ts";
export { toChatJsonl } from "./chat-jsonl.ts";
export { toDatasetJsonl } from "./dataset-jsonl.ts";
export { toPreferenceJsonl } from "./preference-jsonl.ts";
export { toVerlParquet, type VerlExportOptions } from "./verl-parquet.ts";
