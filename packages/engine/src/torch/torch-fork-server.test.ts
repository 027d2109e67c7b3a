/**
 * Torch workers start as forks of one fork server per Python, which imported torch, transformers and peft once: each
 * fork is a child of that server, speaks the worker protocol over its sockets, ends when its stdin closes or it is
 * killed, and reports its exit; `ARC_TORCH_FORK_SERVER=0` starts each worker as its own process instead.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { describe, it } from "node:test";
import { torchUnavailable } from "./__fixtures__/torch-available.ts";
import { type ForkedWorker, forkTorchWorker } from "./torch-fork-server.ts";
import { TORCH_WORKER_DIR, TorchWorker, torchPython } from "./torch-worker.ts";

/** The parent pid of a process, from /proc. */
function parentOf(pid: number): number {
  return Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
}

/** Resolves with a fork's `exit` event's code and signal. */
function exitOf(fork: ForkedWorker): Promise<[number | null, string | null]> {
  return new Promise((resolve) => fork.once("exit", (code, signal) => resolve([code, signal])));
}

/** Sends one request line to a fork and resolves with its reply. */
function ask(fork: ForkedWorker, lines: AsyncIterator<string>, request: object): Promise<unknown> {
  fork.stdin.write(`${JSON.stringify(request)}\n`);
  return lines.next().then((line) => JSON.parse(line.value as string));
}

describe("torch workers forked from a fork server", { skip: torchUnavailable() }, () => {
  it("forks each worker from the one server, speaking the worker protocol, and reports how each ended", async () => {
    const env = { ...process.env, PYTHONPATH: TORCH_WORKER_DIR, OMP_NUM_THREADS: "1" };
    const forks = [0, 1].map(() => forkTorchWorker(torchPython(), TORCH_WORKER_DIR, [], env));
    const lines = forks.map((fork) => createInterface({ input: fork.stdout })[Symbol.asyncIterator]());
    const replies = await Promise.all(forks.map((fork, i) => ask(fork, lines[i], { id: 7, method: "ping" })));
    for (const reply of replies)
      assert.deepEqual(reply, {
        id: 7,
        error: { type: "WorkerError", message: "ping: the worker has no engine yet; call init first" },
      });
    const [a, b] = forks.map((fork) => fork.pid as number);
    assert.notEqual(a, b);
    assert.equal(parentOf(a), parentOf(b), "both are children of the fork server");
    assert.notEqual(parentOf(a), process.pid, "a fork is not a process this one spawned");

    const ends = forks.map(exitOf);
    forks[0].stdin.end();
    forks[1].kill("SIGKILL");
    assert.deepEqual(await ends[0], [0, null], "a closed stdin ends the worker cleanly");
    assert.deepEqual(await ends[1], [null, "SIGKILL"]);
  });

  it("starts each worker as its own process under ARC_TORCH_FORK_SERVER=0", async () => {
    process.env.ARC_TORCH_FORK_SERVER = "0";
    try {
      const worker = TorchWorker.start();
      const child = (worker as unknown as { child: { pid: number } }).child;
      assert.equal(parentOf(child.pid), process.pid);
      await worker.close();
    } finally {
      delete process.env.ARC_TORCH_FORK_SERVER;
    }
  });
});
