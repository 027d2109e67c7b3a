import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { lockDataDir } from "./data-dir-lock.ts";

const lockModule = new URL("./data-dir-lock.ts", import.meta.url).href;

/** A child process that takes the lock of `dir` (when given) and then waits until killed. */
function startChild(dir?: string): Promise<ChildProcess> {
  const code = dir
    ? `const { lockDataDir } = await import(${JSON.stringify(lockModule)}); lockDataDir(${JSON.stringify(dir)});`
    : "";
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      `${code} console.log("ready"); setInterval(() => {}, 60_000);`,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      if (String(d).includes("ready")) resolve(child);
    });
    child.stderr.on("data", (d) => {
      out += d;
    });
    child.once("exit", (code) => reject(new Error(`the child exited with ${code}: ${out}`)));
  });
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

describe("the embedded database's data-directory lock", () => {
  const root = mkdtempSync(join(tmpdir(), "arc-lock-"));
  const children: ChildProcess[] = [];
  let n = 0;
  const freshDir = () => join(root, `data-${n++}`);
  after(async () => {
    for (const child of children) await kill(child);
    rmSync(root, { recursive: true, force: true });
  });

  it("takes over a lock left by an earlier process that had this process's PID (PID 1 in a container)", () => {
    const dir = freshDir();
    writeFileSync(`${dir}.lock`, String(process.pid));
    const release = lockDataDir(dir);
    release();
  });

  it("takes over a lock whose PID now belongs to a live, unrelated process", async () => {
    const dir = freshDir();
    const crashed = await startChild(dir);
    children.push(crashed);
    await kill(crashed);
    const unrelated = await startChild();
    children.push(unrelated);
    const lock = readFileSync(`${dir}.lock`, "utf8");
    writeFileSync(`${dir}.lock`, lock.replace(String(crashed.pid), String(unrelated.pid)));
    const release = lockDataDir(dir);
    release();
  });

  it("refuses a lock held by a live process, naming it, and takes it over once that process is killed", async () => {
    const dir = freshDir();
    const holder = await startChild(dir);
    children.push(holder);
    assert.throws(
      () => lockDataDir(dir),
      (error: Error) => {
        assert.equal(error.name, "DatabaseLockedError");
        assert.match(error.message, new RegExp(`in use by process ${holder.pid}\\b`));
        return true;
      },
    );
    await kill(holder);
    const release = lockDataDir(dir);
    release();
  });

  it("refuses a second lock in the process that holds it", () => {
    const dir = freshDir();
    const release = lockDataDir(dir);
    try {
      assert.throws(() => lockDataDir(dir), /already open in this process/);
    } finally {
      release();
    }
    lockDataDir(dir)();
  });
});
