/**
 * Reduces an error message to its shape, so the same kind of error groups together whatever values it
 * names: lowercased, quoted strings → `<s>`, numbers → `<n>`, whitespace collapsed, at most 80 characters.
 * `Unexpected token 'I', "I'm sorry" is not valid JSON` → `unexpected token <s>, <s> is not valid json`.
 */
export function errorSignature(message: string): string {
  return message
    .toLowerCase()
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, "<s>")
    .replace(/\d+(?:\.\d+)?/g, "<n>")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 80);
}
