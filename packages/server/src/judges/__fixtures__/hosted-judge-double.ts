import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A running TEST DOUBLE of a hosted LLM judge, and what it saw. */
export interface HostedJudgeDouble {
  /** Its OpenAI-compatible base URL (`.../v1`). */
  url: string;
  /** Chat calls answered so far. */
  calls: number;
  /** The most calls it had open at once. */
  peakOpen: number;
  /** Whether it answers the opposite of what it reads (a judge that disagrees with every label). */
  contrary: boolean;
  close(): Promise<void>;
}

/**
 * TEST DOUBLE of a hosted LLM judge (no hosted model can be reached here), over real HTTP: it reads the transcript it
 * is sent and fails the answer exactly when the answer contains `wrongMarker` (or passes it then, when `contrary`),
 * taking `delayMs` per call so a caller's concurrency shows in `peakOpen`.
 */
export function startHostedJudgeDouble(wrongMarker: string, delayMs = 5): Promise<HostedJudgeDouble> {
  let open = 0;
  const double: Omit<HostedJudgeDouble, "url"> & { url?: string } = {
    calls: 0,
    peakOpen: 0,
    contrary: false,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    open++;
    double.peakOpen = Math.max(double.peakOpen, open);
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      setTimeout(() => {
        double.calls++;
        const request = JSON.parse(body) as { messages: { content: string }[] };
        const judged = request.messages.at(-1)?.content.split("[assistant — the answer to judge]")[1] ?? "";
        const failed = judged.includes(wrongMarker) !== double.contrary;
        const verdict = failed
          ? { failed, class: "wrong_value", severity: "high", evidence: wrongMarker, confidence: 0.9 }
          : { failed, class: "none", severity: "none", evidence: "as asked", confidence: 0.9 };
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ choices: [{ message: { content: JSON.stringify(verdict) } }] }));
        open--;
      }, delayMs);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      double.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      resolve(double as HostedJudgeDouble);
    }),
  );
}
