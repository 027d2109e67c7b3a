// The least a Node.js gateway can do, for the gateway benchmark's floor: a node:http server that forwards each call to
// the upstream over keep-alive connections and pipes the answer back, with no parsing, no auth and no recording.
// Prints one JSON line with its URL. Usage: node --import tsx bench/bare-proxy.ts <upstream /v1 URL>
import { Agent, createServer, request } from "node:http";

const upstream = new URL(process.argv[2] ?? "");
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const server = createServer((req, res) => {
  const forward = request(
    {
      host: upstream.hostname,
      port: upstream.port,
      path: `${upstream.pathname}${req.url?.replace(/^\/v1/, "") ?? ""}`,
      method: req.method,
      headers: { "content-type": "application/json", "content-length": req.headers["content-length"] ?? "0" },
      agent,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on("error", () => res.destroy());
  req.pipe(forward);
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("no address");
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}/v1`, key: "none" })}\n`);
});
process.once("SIGTERM", () => server.close(() => process.exit(0)));
