export {
  type EvaluateTeachingOptions,
  evaluateTeaching,
  type TeachingEvaluation,
} from "./evaluate-teaching.ts";
export type {
  ConversionsTold,
  FamilyTeaching,
  ProbeDiagnosis,
  StrongStudentTeaching,
  TeacherReply,
} from "./family-teaching.ts";
export {
  type ConversionKindScore,
  kindsWorthTelling,
  measureStrongConversions,
} from "./measure-strong-conversions.ts";
export { trainEngineReferenceLikelihood } from "./reference-likelihood.ts";
export { probeMessages, teacherMessages } from "./teacher-messages.ts";
export { openTeacherRun, type TeacherEvaluation, type TeacherRun } from "./teacher-run.ts";
export {
  generateTeachingExamples,
  type TeachingExample,
  type TeachingExampleOptions,
} from "./teaching-examples.ts";
export {
  type ReferenceLikelihood,
  TeachingRewarder,
  type TeachingRewarderOptions,
  type TeachingScore,
} from "./teaching-rewarder.ts";
export { teachingSampler } from "./teaching-sampler.ts";
