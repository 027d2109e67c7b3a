import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { openAIJudgeClient } from "./judge-client.ts";
import { JudgeQueue, JudgeQueueRefusal } from "./judge-queue.ts";

const request = {
  model: "judge-1",
  messages: [{ role: "user" as const, content: "judge this" }],
  responseFormat: { type: "json_object" },
  maxTokens: 8,
};

/** A judge endpoint over real HTTP that answers after `delayMs`, or with the statuses queued in `failures` first. */
function endpoint() {
  const state = { open: 0, peakOpen: 0, calls: 0, delayMs: 50, failures: [] as number[] };
  const server = createServer((req, res) => {
    state.calls++;
    state.open++;
    state.peakOpen = Math.max(state.peakOpen, state.open);
    req.resume();
    const done = () => {
      state.open--;
      const status = state.failures.shift();
      if (status) {
        res.writeHead(status).end("busy");
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ choices: [{ message: { content: "ok" } }], usage: { total_tokens: 3 } }));
    };
    const timer = setTimeout(done, state.delayMs);
    res.on("close", () => {
      if (!res.writableEnded) {
        clearTimeout(timer);
        state.open--;
      }
    });
  });
  return { server, state };
}

describe("a judge queue", () => {
  const { server, state } = endpoint();
  let baseUrl: string;
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(
    () =>
      new Promise<void>((resolve) => {
        (server as Server).close(() => resolve());
        server.closeAllConnections();
      }),
  );

  it("sends at most `concurrency` calls at once, however many are made", async () => {
    state.delayMs = 10;
    state.peakOpen = 0;
    const queue = new JudgeQueue("judge-1", { concurrency: 3, maxWaiting: 100 });
    const client = queue.client(openAIJudgeClient({ baseUrl }), "foreground");
    const answers = await Promise.all(Array.from({ length: 40 }, () => client.complete(request)));
    assert.equal(answers.length, 40);
    assert.equal(state.peakOpen, 3);
    assert.equal(queue.stats().peakInFlight, 3);
  });

  it("refuses background calls past maxWaiting at once, and queues foreground ones ahead of them", async () => {
    state.delayMs = 40;
    const queue = new JudgeQueue("judge-1", { concurrency: 1, maxWaiting: 4 });
    const inner = openAIJudgeClient({ baseUrl });
    const order: string[] = [];
    const call = (priority: "foreground" | "background", name: string) =>
      queue
        .client(inner, priority)
        .complete(request)
        .then(
          () => order.push(name),
          (error: Error) => {
            order.push(`${name} refused`);
            assert.ok(error instanceof JudgeQueueRefusal);
            assert.match(error.message, /the judge judge-1 is busy: 4 calls wait and 1 are in flight/);
          },
        );
    const calls = [0, 1, 2, 3, 4].map((i) => call("background", `b${i}`));
    calls.push(call("background", "b5"), call("foreground", "f0"));
    await Promise.all(calls);
    assert.equal(order[0], "b5 refused", "the sixth background call is refused before any answer");
    assert.deepEqual(order.slice(1), ["b0", "f0", "b1", "b2", "b3", "b4"]);
    assert.equal(queue.stats().peakWaiting, 5);
  });

  it("tries a 503 again after a back-off, and never a 400", async () => {
    state.delayMs = 1;
    const queue = new JudgeQueue("judge-1", { retries: 2, backoffMs: 20 });
    const client = queue.client(openAIJudgeClient({ baseUrl }), "foreground");
    const calls = state.calls;
    state.failures = [503, 503];
    const started = performance.now();
    assert.deepEqual(await client.complete(request), { content: "ok", tokens: 3 });
    assert.equal(state.calls - calls, 3);
    assert.ok(
      performance.now() - started >= 10 + 20,
      "the retries waited their back-off (at least half of each)",
    );
    assert.equal(queue.stats().retried, 2);
    state.failures = [400];
    await assert.rejects(client.complete(request), /HTTP 400/);
    assert.equal(state.calls - calls, 4, "a refused request is not sent again");
    state.failures = [503, 503, 503];
    await assert.rejects(client.complete(request), /HTTP 503/);
    assert.equal(state.calls - calls, 7, "the first try and two retries");
  });

  it("gives up on a call at its deadline, waiting or in flight, and frees its slot", async () => {
    state.delayMs = 500;
    const queue = new JudgeQueue("judge-1", { concurrency: 1, deadlineMs: 150, retries: 0 });
    const client = queue.client(openAIJudgeClient({ baseUrl }), "foreground");
    const started = performance.now();
    const outcomes = await Promise.allSettled([client.complete(request), client.complete(request)]);
    const took = performance.now() - started;
    assert.ok(took < 400, `both ended by their deadline, not the answer (${took.toFixed(0)} ms)`);
    assert.ok(outcomes.every((o) => o.status === "rejected"));
    const [inFlight, waiting] = outcomes.map((o) => String((o as PromiseRejectedResult).reason.message));
    assert.match(inFlight, /no answer by its deadline/);
    assert.match(waiting, /gave no answer by the call's deadline/);
    assert.deepEqual([queue.stats().inFlight, queue.stats().waiting], [0, 0]);
    const early = Date.now() + 50;
    await assert.rejects(client.complete({ ...request, deadline: early }), /deadline/);
    assert.ok(Date.now() - early < 100, "a request's own deadline, earlier than the queue's, ends it");
  });

  it("refuses limits that are not positive numbers, naming them", () => {
    assert.throws(
      () => new JudgeQueue("j", { concurrency: 0 }),
      /judge queue concurrency: expected a positive/,
    );
  });
});
