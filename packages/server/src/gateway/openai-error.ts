import { jsonAnswer, type ModelAnswer } from "./model-answer.ts";

/** An OpenAI-shaped error answer made by the gateway itself (not forwarded from a model). */
export function openAiError(
  status: number,
  message: string,
  type: string,
  code: string | null,
  param: string | null = null,
): ModelAnswer {
  return jsonAnswer(status, { error: { message, type, param, code } });
}
