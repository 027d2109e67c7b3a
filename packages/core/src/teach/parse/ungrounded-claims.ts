/**
 * Finds the claims a teaching makes about its question that the question does not support (a task family's
 * `ungroundedClaims` hook: e.g. a month or hour conversion the request does not contain).
 */
export type UngroundedClaims = (question: string, teaching: string) => string[];

/**
 * The teaching without `claims` (every occurrence), its separators tidied: "March is month 03; July is month 07."
 * without the second claim is "March is month 03."; a teaching left with nothing but punctuation is empty.
 */
export function removeClaims(teaching: string, claims: readonly string[]): string {
  let text = teaching;
  for (const claim of claims) if (claim !== "") text = text.split(claim).join("");
  text = text
    .replace(/(?:\s*[;,]\s*){2,}/g, "; ")
    .replace(/\s*[;,]\s*([.!?])/g, "$1")
    .replace(/([.!?])\s*[;,]\s*/g, "$1 ")
    .replace(/^\s*[;,.]\s*/, "")
    .replace(/\s*[;,]\s*$/, "")
    .replace(/ {2,}/g, " ")
    .trim();
  return /^[\s.;,!?]*$/.test(text) ? "" : text;
}
