// A reporter for Node's test runner that writes one JSON line for each test's outcome: `pass`, `fail`, or `skip` with
// the reason its `skip` gave (a skipped suite is one line), and a `time` line with the duration of each top-level test
// or suite. scripts/test.mjs runs it beside the spec reporter and counts the lines at its end.
export default async function* outcomeReporter(source) {
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const { file, name, skip, details, nesting } = event.data;
    if (nesting === 0 && typeof details?.duration_ms === "number") {
      yield `${JSON.stringify({ outcome: "time", file, ms: details.duration_ms })}\n`;
    }
    if (skip) {
      const reason = skip === true ? "no reason given" : String(skip);
      yield `${JSON.stringify({ outcome: "skip", file, name, reason })}\n`;
    } else if (event.type === "test:fail") {
      yield `${JSON.stringify({ outcome: "fail", file, name })}\n`;
    } else if (details?.type !== "suite") {
      yield `${JSON.stringify({ outcome: "pass", file, name })}\n`;
    }
  }
}
