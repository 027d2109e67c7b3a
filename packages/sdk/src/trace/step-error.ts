import type { WireStepError } from "../wire/wire-types.ts";

/**
 * What a thrown value looks like on the wire. Reads the fields OpenAI-style errors carry (`status`, `code`,
 * `type`) structurally, so it works for the `openai` client's `APIError` without importing it.
 */
export function toStepError(thrown: unknown): WireStepError {
  if (typeof thrown !== "object" || thrown === null) return { message: String(thrown) };
  const e = thrown as { message?: unknown; name?: unknown; type?: unknown; code?: unknown; status?: unknown };
  const error: WireStepError = { message: typeof e.message === "string" ? e.message : String(thrown) };
  // Error subclasses often leave `name` as "Error" (openai's APIConnectionError does): the class name says more.
  const className = (thrown as { constructor?: { name?: unknown } }).constructor?.name;
  const name =
    e.name === "Error" && typeof className === "string" && className !== "Object" ? className : e.name;
  const type = typeof e.type === "string" ? e.type : typeof name === "string" ? name : undefined;
  if (type) error.type = type;
  if (typeof e.code === "string" || (typeof e.code === "number" && Number.isFinite(e.code)))
    error.code = e.code;
  if (typeof e.status === "number" && Number.isInteger(e.status)) error.status = e.status;
  return error;
}
