/**
 * Normalizes request text for comparison: lowercased, accents and punctuation dropped, every number
 * replaced by `0` (so "Convert 50 USD" and "Convert 75 USD" read the same), whitespace collapsed.
 */
export function normalizeText(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/\d+(?:[.,]\d+)*/g, "0")
    .replace(/[^a-z0-9]+/g, " ")
    .trim();
}

/** Term counts of a text: its normalized words and word bigrams, the features TF-IDF weighs. */
export function textTerms(text: string): Map<string, number> {
  const words = normalizeText(text).split(" ").filter(Boolean);
  const terms = new Map<string, number>();
  const add = (t: string) => terms.set(t, (terms.get(t) ?? 0) + 1);
  for (let i = 0; i < words.length; i++) {
    add(words[i]);
    if (i + 1 < words.length) add(`${words[i]} ${words[i + 1]}`);
  }
  return terms;
}
