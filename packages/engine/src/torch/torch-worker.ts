import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type ForkedWorker, forkServerEnabled, forkTorchWorker } from "./torch-fork-server.ts";

/** Where the Python packages live, beside `src/` and `dist/`: `arc_torch` (the worker) and `arc_tools`. */
export const TORCH_WORKER_DIR = fileURLToPath(new URL("../../python", import.meta.url));

/** The project's own venv, made by `npm test` (scripts/python-env.mjs). */
const PROJECT_VENV_PYTHON = fileURLToPath(new URL("../../../../.venv/bin/python", import.meta.url));

/**
 * The Python that runs the worker: `ARC_PYTHON`, else the project's venv, else `python3` on the PATH.
 * It needs torch, transformers, safetensors and peft (packages/engine/python/requirements.txt).
 */
export function torchPython(): string {
  if (process.env.ARC_PYTHON) return process.env.ARC_PYTHON;
  return existsSync(PROJECT_VENV_PYTHON) ? PROJECT_VENV_PYTHON : "python3";
}

/** An error the worker reported for one request; `type` is its Python class (BatchError, CheckpointError...). */
export class TorchWorkerError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = "TorchWorkerError";
  }
}

/** How to start a worker. */
export interface TorchWorkerOptions {
  /** Processes that train data-parallel under `torchrun` (default 1: a plain process). */
  processes?: number;
  /** The Python to run (default `torchPython()`). */
  python?: string;
  /** Extra environment for the worker (e.g. `CUDA_VISIBLE_DEVICES`). */
  env?: Record<string, string>;
  /**
   * Run the engine in an actor on this Ray cluster instead of in the worker process, with the resources given
   * (default 0 GPUs, 1 CPU). Checkpoint paths must be ones the actor's node reads and writes.
   */
  ray?: { address: string; gpus?: number; cpus?: number };
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  method: string;
  /** Hears the request's progress lines (a streamed `generate`'s tokens) before its reply. */
  onProgress?: (tokens: unknown) => void;
}

/** Lines of the worker's stderr kept for the message of an error that ends it. */
const STDERR_LINES = 30;

/**
 * One Python worker process (or a `torchrun` group, rank 0 speaking) driven over JSON lines: each request
 * `{id, method, params}` gets one reply `{id, result}` or `{id, error: {type, message}}`. See
 * packages/engine/python/PROTOCOL.md.
 */
export class TorchWorker {
  /** The worker process: spawned, or forked from the fork server with the same streams and events. */
  private readonly child: ChildProcess | ForkedWorker;
  private readonly pending = new Map<number, Pending>();
  private readonly stderr: string[] = [];
  private nextId = 1;
  private exited: Error | undefined;
  private readonly exit: Promise<void>;

  private constructor(options: TorchWorkerOptions) {
    const python = options.python ?? torchPython();
    const processes = options.processes ?? 1;
    if (!Number.isInteger(processes) || processes < 1)
      throw new RangeError(`processes: expected a positive integer, got ${processes}`);
    if (options.ray && processes > 1)
      throw new RangeError("processes: a Ray actor trains as one process; leave processes at 1 with ray");
    const ray = options.ray
      ? [
          "--ray-address",
          options.ray.address,
          "--ray-gpus",
          String(options.ray.gpus ?? 0),
          "--ray-cpus",
          String(options.ray.cpus ?? 1),
        ]
      : [];
    const args =
      processes === 1
        ? ["-m", "arc_torch.worker", ...ray]
        : [
            "-m",
            "torch.distributed.run",
            "--standalone",
            `--nproc_per_node=${processes}`,
            "-m",
            "arc_torch.worker",
          ];
    const env = {
      ...process.env,
      PYTHONPATH: TORCH_WORKER_DIR,
      PYTHONUNBUFFERED: "1",
      OMP_NUM_THREADS: process.env.OMP_NUM_THREADS ?? "1",
      ...options.env,
    };
    this.child =
      processes === 1 && forkServerEnabled()
        ? forkTorchWorker(python, TORCH_WORKER_DIR, ray, env)
        : spawn(python, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    createInterface({ input: this.child.stdout! }).on("line", (line) => this.onLine(line));
    createInterface({ input: this.child.stderr! }).on("line", (line) => {
      this.stderr.push(line);
      if (this.stderr.length > STDERR_LINES) this.stderr.shift();
    });
    this.child.stdin!.on("error", () => {}); // a dead worker is reported by its exit
    this.exit = new Promise((resolve) => {
      const fail = (error: Error) => {
        this.exited = error;
        for (const p of this.pending.values()) p.reject(error);
        this.pending.clear();
        resolve();
      };
      this.child.on("error", (error) =>
        fail(
          new Error(
            `torch worker: cannot start ${python} (${error.message}); set ARC_PYTHON or run npm test once`,
          ),
        ),
      );
      this.child.on("exit", (code, signal) =>
        fail(
          new Error(
            `torch worker exited (${signal ?? `code ${code}`})${this.stderr.length ? `:\n${this.stderr.join("\n")}` : ""}`,
          ),
        ),
      );
    });
  }

  /** Starts a worker; nothing is loaded until the first `call("init", ...)`. */
  static start(options: TorchWorkerOptions = {}): TorchWorker {
    return new TorchWorker(options);
  }

  private onLine(line: string): void {
    let message: {
      id?: number;
      result?: unknown;
      error?: { type: string; message: string };
      tokens?: unknown;
    };
    try {
      message = JSON.parse(line);
    } catch {
      this.stderr.push(`(stdout) ${line}`);
      return;
    }
    const pending = message.id === undefined ? undefined : this.pending.get(message.id);
    if (!pending) return;
    if (message.tokens !== undefined && message.result === undefined && message.error === undefined) {
      pending.onProgress?.(message.tokens);
      return;
    }
    this.pending.delete(message.id!);
    if (message.error)
      pending.reject(new TorchWorkerError(message.error.type, `${pending.method}: ${message.error.message}`));
    else pending.resolve(message.result);
  }

  /**
   * Sends one request and resolves with its result; aborting `signal` asks the worker to cancel it, and
   * `onProgress` hears the progress lines the worker sends before the reply.
   */
  call<T>(
    method: string,
    params: object = {},
    signal?: AbortSignal,
    onProgress?: (tokens: unknown) => void,
  ): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    const reply = new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, method, onProgress });
    });
    this.send({ id, method, params });
    if (signal) {
      const cancel = () => this.send({ id: this.nextId++, method: "cancel", params: { target: id } });
      if (signal.aborted) cancel();
      else signal.addEventListener("abort", cancel, { once: true });
      reply.finally(() => signal.removeEventListener("abort", cancel)).catch(() => {});
    }
    return reply;
  }

  /** Asks the worker to cancel one request of a `generate` call by its request id. */
  cancelRequest(callId: number, requestId: string): void {
    this.send({ id: this.nextId++, method: "cancel", params: { target: `${callId}/${requestId}` } });
  }

  /** The id the next `call` will get (to cancel single requests of it). */
  peekNextId(): number {
    return this.nextId;
  }

  private send(message: object): void {
    if (!this.exited) this.child.stdin!.write(`${JSON.stringify(message)}\n`);
  }

  /** Ends the worker: closes its stdin (it finishes the request in hand and exits), killing it after `graceMs`. */
  async close(graceMs = 10_000): Promise<void> {
    if (this.exited) return;
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    await this.exit;
    clearTimeout(timer);
  }
}
