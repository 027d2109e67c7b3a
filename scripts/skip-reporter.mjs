// A reporter for Node's test runner that writes one JSON line for each skipped test or suite: its file, its name and
// the reason its `skip` gave. scripts/test.mjs runs it beside the spec reporter and counts the reasons at its end.
export default async function* skipReporter(source) {
  for await (const event of source) {
    if (event.type !== "test:pass" || !event.data.skip) continue;
    const { file, name, skip } = event.data;
    yield `${JSON.stringify({ file, name, reason: skip === true ? "no reason given" : String(skip) })}\n`;
  }
}
