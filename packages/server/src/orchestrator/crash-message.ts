/**
 * Why a child process that died says it died, from its stderr: the thrown error's own lines (`TypeError: Cannot read
 * ...`) with the frame that threw it, since the stack's tail names only callers and the Node version. Output without a
 * stack gives its last lines.
 */
export function crashMessage(stderr: string): string {
  const lines = stderr.split(/\r?\n/);
  const isFrame = (line: string | undefined) => line !== undefined && /^\s+at /.test(line);
  // the first frame of the last stack in the output
  let first = -1;
  for (let i = lines.length - 1; i > 0; i--)
    if (isFrame(lines[i]) && !isFrame(lines[i - 1])) {
      first = i;
      break;
    }
  if (first > 0) {
    let start = first - 1;
    // back to a blank line or the caret under the source line Node prints above an uncaught error
    const ends = (line: string) => line.trim() === "" || isFrame(line) || /^\s*\^+\s*$/.test(line);
    while (start > 0 && !ends(lines[start - 1])) start--;
    const message = lines
      .slice(start, first)
      .map((l) => l.trim())
      .join(" ");
    return `${message} (${lines[first].trim()})`;
  }
  return stderr.trim().split(/\r?\n/).slice(-5).join(" | ");
}
