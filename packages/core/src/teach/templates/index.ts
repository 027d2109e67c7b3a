export {
  DEFAULT_BASELINE_TEMPLATE,
  DEFAULT_PROBE_TEMPLATE,
  DEFAULT_STUDENT_WITH_GUIDANCE_TEMPLATE,
  DEFAULT_TEACHER_ADAPTIVE_TEMPLATE,
  DEFAULT_TEACHER_ALWAYS_TEMPLATE,
  renderTemplate,
  TeachingTemplates,
  type TeachingTemplatesInput,
  teachingTemplates,
} from "./teaching-templates.ts";
