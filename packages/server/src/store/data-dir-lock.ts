import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { ArcError } from "@arc/core";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Takes `<dir>.lock` for this process, so two processes never open one embedded database (PGlite is single-process).
 * A lock left by a process that no longer runs is taken over. Returns the release function.
 */
export function lockDataDir(dir: string): () => void {
  const path = `${dir}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(readFileSync(path, "utf8"));
      if (holder && holder !== process.pid && isAlive(holder)) {
        throw new ArcError(
          `the embedded database ${dir} is in use by process ${holder}; stop it, or give this one its own ARC_HOME`,
          { name: "DatabaseLockedError", statusCode: 409 },
        );
      }
      if (holder === process.pid) {
        throw new ArcError(`the embedded database ${dir} is already open in this process; close it first`, {
          name: "DatabaseLockedError",
          statusCode: 409,
        });
      }
      rmSync(path, { force: true });
    }
  }
  throw new ArcError(`could not lock ${dir}`, { name: "DatabaseLockedError", statusCode: 409 });
}
