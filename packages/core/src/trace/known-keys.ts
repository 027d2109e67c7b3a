import { InvalidInputError } from "../errors/index.ts";

/**
 * Refuses the keys of an object a reader does not know, so that a misspelt or unsupported field is an error naming
 * it rather than a value silently dropped. `what` names the object in the message (`the detection settings`), `path`
 * is where it sits in the body; the error's field is the first unknown key's path.
 */
export function refuseUnknownKeys(value: object, known: readonly string[], what: string, path = ""): void {
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  const at = (key: string) => (path ? `${path}.${key}` : key);
  throw new InvalidInputError(
    `${unknown.map(at).join(", ")}: ${unknown.length === 1 ? "not a field" : "not fields"} of ${what}; its fields are ${known.join(", ")}`,
    { field: at(unknown[0]) },
  );
}
