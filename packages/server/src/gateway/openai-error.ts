/** An OpenAI-shaped error answer made by the gateway itself (not forwarded from a model). */
export function openAiError(
  status: number,
  message: string,
  type: string,
  code: string,
  param: string | null = null,
): Response {
  return Response.json({ error: { message, type, param, code } }, { status });
}
