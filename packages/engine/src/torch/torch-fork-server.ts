import { type ChildProcess, spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { PassThrough } from "node:stream";

/**
 * A worker process forked by the fork server (arc_torch/fork_server.py): what `TorchWorker` uses of a
 * `ChildProcess` — its three streams, `kill`, and the `exit` and `error` events — over two Unix sockets.
 */
export class ForkedWorker extends EventEmitter {
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  pid: number | undefined;
  /** Whether the fork has connected its stdin and stdout. */
  connected = false;
  private exitStatus: { code: number | null; signal: string | null } | undefined;
  private stdoutEnded = false;
  private killWhenStarted: NodeJS.Signals | undefined;
  private exited = false;

  /** Sends `signal` to the fork (once it has a pid); like `ChildProcess.kill`. */
  kill(signal: NodeJS.Signals = "SIGTERM"): boolean {
    if (this.exited) return false;
    if (this.pid === undefined) {
      this.killWhenStarted = signal;
      return true;
    }
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** @internal The fork server gave this fork its pid. */
  started(pid: number): void {
    this.pid = pid;
    if (this.killWhenStarted) this.kill(this.killWhenStarted);
  }

  /** @internal The fork's stdout is at its end: every line it wrote has been read. */
  stdoutEnd(): void {
    this.stdoutEnded = true;
    this.maybeExit();
  }

  /** @internal The fork server reported the fork's end. */
  ended(code: number | null, signal: string | null): void {
    this.exitStatus = { code, signal };
    this.maybeExit();
  }

  /** @internal The fork server could not start (its Python is missing): an `error`, as a failed spawn gives. */
  failed(error: Error): void {
    if (this.exited) return;
    this.exited = true;
    this.emit("error", error);
  }

  /**
   * @internal The fork server ended. A fork it started lives on and ends when its output does; one it never started
   * ends now, as a worker process that could not start would, with the server's last words as its stderr.
   */
  serverEnded(code: number | null, signal: string | null, lastWords: string[]): void {
    if (this.pid !== undefined) {
      this.ended(null, null);
      return;
    }
    for (const line of lastWords) this.stderr.write(`${line}\n`);
    this.stdoutEnded = true;
    this.ended(code, signal);
  }

  /** Emits `exit` once the fork has ended and its output is read, so no reply line comes after it. */
  private maybeExit(): void {
    if (this.exited || !this.exitStatus || !this.stdoutEnded) return;
    this.exited = true;
    this.emit("exit", this.exitStatus.code, this.exitStatus.signal);
  }
}

/** One fork server: a Python process that imported torch, transformers and peft, forking a worker per request. */
class ForkServer {
  private readonly child: ChildProcess;
  private readonly forks = new Map<number, ForkedWorker>();
  private readonly byPid = new Map<number, ForkedWorker>();
  private readonly socketDir = mkdtempSync(join(tmpdir(), "arc-fork-"));
  private nextId = 1;
  /** How the server ended: a failed start, or an exit. */
  private dead: { error?: Error; code?: number | null; signal?: NodeJS.Signals | null } | undefined;
  private readonly stderr: string[] = [];
  /** Each fork's sockets still waiting for it to connect: closed if it or the server ends first. */
  private readonly listening = new Map<ForkedWorker, Server[]>();

  constructor(key: string, python: string, pythonPath: string) {
    this.child = spawn(python, ["-m", "arc_torch.fork_server"], {
      env: { ...process.env, PYTHONPATH: pythonPath, PYTHONUNBUFFERED: "1", OMP_NUM_THREADS: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.unref();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr])
      (stream as unknown as { unref?: () => void }).unref?.();
    this.child.stdin!.on("error", () => {});
    createInterface({ input: this.child.stdout! }).on("line", (line) => this.onLine(line));
    createInterface({ input: this.child.stderr! }).on("line", (line) => {
      this.stderr.push(line);
      if (this.stderr.length > 30) this.stderr.shift();
    });
    const forget = () => {
      servers.delete(key);
      for (const server of [...this.listening.values()].flat()) server.close();
      this.listening.clear();
      rmSync(this.socketDir, { recursive: true, force: true });
    };
    this.child.on("error", (error) => {
      this.dead = { error };
      forget();
      for (const fork of this.everyFork()) fork.failed(error);
    });
    this.child.on("exit", (code, signal) => {
      this.dead = { code, signal };
      forget();
      for (const fork of this.everyFork()) fork.serverEnded(code, signal, this.stderr);
    });
  }

  /** Keeps the event loop alive while a fork has yet to be reported ended, and only then. */
  private holdLoop(): void {
    const stdout = this.child.stdout as unknown as { ref?: () => void; unref?: () => void };
    if (this.forks.size + this.byPid.size > 0) stdout.ref?.();
    else stdout.unref?.();
  }

  /** Every fork not yet reported ended, started or not; the maps are emptied. */
  private everyFork(): ForkedWorker[] {
    const forks = [...this.forks.values(), ...this.byPid.values()];
    this.forks.clear();
    this.byPid.clear();
    return forks;
  }

  private onLine(line: string): void {
    let message: {
      id?: number;
      pid?: number;
      error?: string;
      exit?: number;
      code?: number | null;
      signal?: string | null;
    };
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.exit !== undefined) {
      const fork = this.byPid.get(message.exit);
      this.byPid.delete(message.exit);
      this.holdLoop();
      if (!fork) return;
      // a fork that ended before it connected (its last words, if any, are lost with its stderr) ends as it is
      for (const server of this.listening.get(fork) ?? []) server.close();
      this.listening.delete(fork);
      if (!fork.connected) fork.stdoutEnd();
      fork.ended(message.code ?? null, message.signal ?? null);
      return;
    }
    if (message.id === undefined) return;
    const fork = this.forks.get(message.id);
    this.forks.delete(message.id);
    if (!fork) return;
    if (message.pid !== undefined) {
      this.byPid.set(message.pid, fork);
      fork.started(message.pid);
    } else fork.failed(new Error(`torch fork server: ${message.error}`));
  }

  /** Forks a worker with `args` and `env`; its streams connect once the fork does. */
  fork(args: string[], env: NodeJS.ProcessEnv): ForkedWorker {
    const fork = new ForkedWorker();
    const dead = this.dead;
    if (dead) {
      queueMicrotask(() =>
        dead.error
          ? fork.failed(dead.error)
          : fork.serverEnded(dead.code ?? null, dead.signal ?? null, this.stderr),
      );
      return fork;
    }
    const id = this.nextId++;
    const paths = { stdio: join(this.socketDir, `${id}.io`), stderr: join(this.socketDir, `${id}.err`) };
    const waiting: Server[] = [];
    this.listening.set(fork, waiting);
    const stdio = acceptOne(paths.stdio, waiting, (socket) => {
      fork.connected = true;
      fork.stdin.pipe(socket);
      socket.pipe(fork.stdout);
      socket.on("end", () => fork.stdoutEnd());
    });
    const stderr = acceptOne(paths.stderr, waiting, (socket) => socket.pipe(fork.stderr));
    this.forks.set(id, fork);
    this.holdLoop();
    Promise.all([stdio, stderr]).then(
      () => {
        if (!this.dead) this.child.stdin!.write(`${JSON.stringify({ id, args, env, ...paths })}\n`);
      },
      (error: Error) => {
        this.forks.delete(id);
        for (const server of waiting) server.close();
        this.listening.delete(fork);
        this.holdLoop();
        fork.failed(error);
      },
    );
    return fork;
  }
}

/**
 * Listens on the Unix socket `path` for one connection, handed to `onConnection`; resolves once listening. The
 * listener is in `waiting` until it has its connection.
 */
function acceptOne(path: string, waiting: Server[], onConnection: (socket: Socket) => void): Promise<void> {
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    server.close();
    waiting.splice(waiting.indexOf(server), 1);
    rmSync(path, { force: true });
    onConnection(socket);
  });
  waiting.push(server);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
}

const servers = new Map<string, ForkServer>();
const keyOf = (python: string, pythonPath: string) => `${python}\0${pythonPath}`;

/**
 * Starts a torch worker (`python -m arc_torch.worker args`) as a fork of this process's fork server for `python`,
 * started on first use and shared by every later worker. `ARC_TORCH_FORK_SERVER=0` turns it off.
 */
export function forkTorchWorker(
  python: string,
  pythonPath: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): ForkedWorker {
  const key = keyOf(python, pythonPath);
  let server = servers.get(key);
  if (!server) {
    server = new ForkServer(key, python, pythonPath);
    servers.set(key, server);
  }
  return server.fork(args, env);
}

/** Whether workers start as forks of a fork server (`ARC_TORCH_FORK_SERVER`, default on). */
export function forkServerEnabled(): boolean {
  return process.env.ARC_TORCH_FORK_SERVER !== "0";
}
