import type { Task, TeachMessage, TrainEngine } from "@arc/core";
import type { RenderExample } from "../run/engine-factory.ts";
import type { ReferenceLikelihood } from "./teaching-rewarder.ts";

/** Rows one teacher-forced pass scores at most. */
const MAX_ROWS_PER_PASS = 64;

interface Pending {
  messages: TeachMessage[];
  reply: string;
  resolve: (probability: number) => void;
  reject: (error: unknown) => void;
}

/**
 * A ReferenceLikelihood read from a frozen student loaded as a train engine: its teacher-forced log-probs of the
 * reply (rendered by `render`, so the reply ends with the end-of-turn token the student stops on), summed and
 * exponentiated. Requests made in the same turn of the event loop share one pass of up to 64 rows.
 */
export function trainEngineReferenceLikelihood(
  student: Pick<TrainEngine, "logprobs">,
  render: RenderExample,
  reference: (task: Task) => string,
): ReferenceLikelihood {
  let pending: Pending[] = [];
  const flush = async () => {
    const rows = pending;
    pending = [];
    for (let start = 0; start < rows.length; start += MAX_ROWS_PER_PASS) {
      const chunk = rows.slice(start, start + MAX_ROWS_PER_PASS);
      try {
        const rendered = chunk.map((row) => render(row.messages, row.reply));
        const logprobs = await student.logprobs({
          promptTokens: rendered.map((r) => r.promptTokens),
          outputTokens: rendered.map((r) => r.outputTokens),
        });
        chunk.forEach((row, i) => {
          row.resolve(Math.exp(logprobs[i].reduce((sum, x) => sum + x, 0)));
        });
      } catch (error) {
        for (const row of chunk) row.reject(error);
      }
    }
  };
  return {
    reference,
    probability: (messages, reply) =>
      new Promise((resolve, reject) => {
        if (pending.length === 0) setImmediate(flush);
        pending.push({ messages, reply, resolve, reject });
      }),
  };
}
