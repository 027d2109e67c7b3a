/** Length of the prefix of `text` that no later token can change: not the start of a stop string, not a cut character. */
export function stableLength(text: string, stops: string[]): number {
  let end = text.length;
  while (end > 0 && text[end - 1] === "\uFFFD") end--;
  for (const s of stops) {
    for (let k = Math.min(s.length - 1, end); k > 0; k--) {
      if (text.slice(0, end).endsWith(s.slice(0, k))) {
        end -= k;
        break;
      }
    }
  }
  return end;
}
