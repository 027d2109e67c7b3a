export {
  type ContentImage,
  extractInlineImages,
  IMAGE_REF_PREFIX,
  imageBytes,
  imageRefs,
  inlineImages,
} from "./content-images.ts";
export {
  canonicalJson,
  createDataset,
  type Dataset,
  type DatasetKind,
  type DatasetRows,
  type EvalRow,
  type Lineage,
  type PreferenceRow,
  type PromptContext,
  type PromptRow,
  questionsOf,
  sha256,
} from "./dataset.ts";
export { buildEvalSet, type EvalSetOptions } from "./eval-set.ts";
export { type FailureItem, failureItemFromTrace } from "./failure-item.ts";
export { candidatesFromFeedback } from "./feedback-candidates.ts";
export { duplicateKey, NearDuplicateIndex } from "./near-duplicate-index.ts";
export { buildPreferenceSet, type ChosenCandidate, type PreferenceSetOptions } from "./preference-set.ts";
export { buildPromptPool, type PromptPoolOptions } from "./prompt-pool.ts";
export { seededShuffle } from "./seeded-shuffle.ts";
