// The model server the gateway benchmark fronts: an OpenAI-compatible chat completions endpoint that answers every
// call after a fixed wait (a test double; no model runs), in a process of its own. It notes, per call, how long it
// held the call (body read to answer written); the bench subtracts that from the time each call took end to end, so
// the timer's jitter on this side does not count as any gateway's overhead. The call's key is the `[call N]` tag in
// its last message. Prints one JSON line with its URL.
// Usage: node --import tsx bench/fixed-latency-upstream.ts [latency-ms]
import { createServer } from "node:http";

const latencyMs = Number(process.argv[2] ?? 20);
/** Milliseconds this server held each tagged call, by tag. */
const heldMs = new Map<string, number>();

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === "/held") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(Object.fromEntries(heldMs)));
    heldMs.clear();
    return;
  }
  if (req.method === "GET" && req.url?.endsWith("/models")) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ object: "list", data: [{ id: "bench-model", object: "model", owned_by: "bench" }] }),
    );
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const started = performance.now();
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      model?: string;
      messages?: { content?: unknown }[];
    };
    const last = body.messages?.at(-1)?.content;
    const tag = typeof last === "string" ? /\[call (\S+)\]/.exec(last)?.[1] : undefined;
    setTimeout(() => {
      const answer = JSON.stringify({
        id: `chatcmpl-${tag ?? "untagged"}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model ?? "bench-model",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: "It is 12 degrees and cloudy in Oslo." },
            finish_reason: "stop",
            logprobs: null,
          },
        ],
        usage: { prompt_tokens: 24, completion_tokens: 10, total_tokens: 34 },
      });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(answer) });
      res.end(answer);
      if (tag) heldMs.set(tag, performance.now() - started);
    }, latencyMs);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("no address");
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}/v1` })}\n`);
});
process.once("SIGTERM", () => server.close(() => process.exit(0)));
