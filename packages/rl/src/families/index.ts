export { FAMILY_TEACHINGS, teachingOf } from "./family-teachings.ts";
export {
  FAMILIES_ENV,
  familyPathsFromEnv,
  loadedFamilyModules,
  loadFamiliesFromEnv,
  loadTaskFamilies,
} from "./load-task-families.ts";
export { ReferenceToolcallTeacher } from "./toolcall/reference-toolcall-teacher.ts";
export {
  diagnoseToolcallProbe,
  falseConversions,
  probedTool,
  TOOLCALL_TEACHING_TEMPLATES,
  type ToolcallDiagnosis,
  tellsConversions,
  toolcallAnswers,
  toolcallTeacherReply,
  toolcallTeaching,
  verifyToolcallAttempt,
} from "./toolcall/toolcall-teaching.ts";
