export {
  type EvaluateTeachingOptions,
  evaluateTeaching,
  type TeachingEvaluation,
} from "./evaluate-teaching.ts";
export {
  type ConversionKindScore,
  kindsWorthTelling,
  measureStrongConversions,
} from "./measure-strong-conversions.ts";
export { trainEngineReferenceLikelihood } from "./reference-likelihood.ts";
export { ReferenceToolcallTeacher } from "./reference-toolcall-teacher.ts";
export {
  type TeacherGrpoSettings,
  type TeacherGrpoStepResult,
  teacherGrpoStep,
} from "./teacher-grpo-step.ts";
export { probeMessages, teacherMessages } from "./teacher-messages.ts";
export { loadTeacherRecipe, TeacherRecipe } from "./teacher-recipe.ts";
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
export {
  type ConversionsTold,
  diagnoseToolcallProbe,
  falseConversions,
  probedTool,
  type StrongStudentTeaching,
  TOOLCALL_TEACHING_TEMPLATES,
  type ToolcallDiagnosis,
  tellsConversions,
  toolcallAnswers,
  toolcallTeacherReply,
  verifyToolcallAttempt,
} from "./toolcall-teaching.ts";
export { trainTeacherGrpo, trainTeacherSft } from "./train-teacher.ts";
