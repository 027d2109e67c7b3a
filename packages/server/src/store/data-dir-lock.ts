import { execFileSync } from "node:child_process";
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { ArcError } from "@arc/core";

/** What a lock file records of its holder: the PID, and when that process started (null where it cannot be read). */
interface LockHolder {
  pid: number;
  started: string | null;
}

/** Lock files this process holds: what tells it from an earlier process with its PID where start times cannot. */
const heldHere = new Set<string>();

/**
 * When process `pid` started, as an opaque token, or null if it does not run or this platform cannot tell: on Linux
 * the boot id and field 22 of `/proc/<pid>/stat` (start time in clock ticks since boot), elsewhere `ps -o lstart`.
 */
function startTime(pid: number): string | null {
  try {
    if (process.platform === "linux") {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // the command name (field 2) may hold spaces and parentheses: count fields after its closing parenthesis
      const ticks = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
      const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
      return ticks ? `${boot}:${ticks}` : null;
    }
    const started = execFileSync("ps", ["-o", "lstart=", "-p", String(pid)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return started || null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The holder a lock file names; a bare PID is the format of earlier versions. Null for a file cut short by a crash. */
function readHolder(path: string): LockHolder | null {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
  const { pid, started } = (
    typeof value === "number" ? { pid: value } : (value ?? {})
  ) as Partial<LockHolder>;
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0) return null;
  return { pid, started: typeof started === "string" ? started : null };
}

/**
 * Whether the process that wrote the lock still runs: its PID is alive and, where start times can be read, it is
 * the same process and not a later one that was given the same PID (PID 1 in every container, or reuse after a crash).
 */
function holderRuns(holder: LockHolder, path: string): boolean {
  if (!isAlive(holder.pid)) return false;
  if (holder.started === null) return holder.pid !== process.pid || heldHere.has(path);
  const now = startTime(holder.pid);
  return now === null || now === holder.started;
}

/**
 * Takes `<dir>.lock` for this process, so two processes never open one embedded database (PGlite is single-process).
 * A lock whose holder no longer runs is taken over, also when its PID now belongs to another process. Returns the
 * release function.
 */
export function lockDataDir(dir: string): () => void {
  const path = `${dir}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, JSON.stringify({ pid: process.pid, started: startTime(process.pid) }));
      closeSync(fd);
      heldHere.add(path);
      return () => {
        heldHere.delete(path);
        rmSync(path, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = readHolder(path);
      if (holder && holderRuns(holder, path)) {
        throw new ArcError(
          holder.pid === process.pid
            ? `the embedded database ${dir} is already open in this process; close it first`
            : `the embedded database ${dir} is in use by process ${holder.pid}; stop it, or give this one its own ARC_HOME`,
          { name: "DatabaseLockedError", statusCode: 409 },
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new ArcError(`could not lock ${dir}`, { name: "DatabaseLockedError", statusCode: 409 });
}
