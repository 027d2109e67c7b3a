import { renderTemplate, type TeachingMode, type TeachingTemplates, type TeachMessage } from "@arc/core";

/**
 * The teacher's prompt exactly as `runTeaching` sends it (system message when configured, then the
 * mode's template with the question and the held probe), so what the teacher is trained on is what it
 * sees at run time.
 */
export function teacherMessages(
  templates: TeachingTemplates,
  mode: Exclude<TeachingMode, "off">,
  question: string,
  approach: string,
): TeachMessage[] {
  const template = mode === "always" ? templates.teacherAlways : templates.teacherAdaptive;
  const content = renderTemplate(template, {
    question,
    approach: approach || "(the student gave no approach)",
  });
  return [
    ...(templates.teacherSystem ? [{ role: "system" as const, content: templates.teacherSystem }] : []),
    { role: "user", content },
  ];
}

/** The student's probe prompt exactly as `runTeaching` sends it. */
export function probeMessages(templates: TeachingTemplates, question: string): TeachMessage[] {
  return [
    ...(templates.studentSystem ? [{ role: "system" as const, content: templates.studentSystem }] : []),
    { role: "user", content: renderTemplate(templates.probe, { question }) },
  ];
}
