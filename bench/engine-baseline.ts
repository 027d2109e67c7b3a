// Runs another commit's `bench:engine` at the demo size on this machine, for speed-ups measured in one run: the
// commit is checked out in a temporary git worktree that shares this checkout's installed packages (its own
// @arc/* packages linked in), and its figures are read from the results file it writes there.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The demo-size figures another commit's engine bench gives. */
export interface BaselineFigures {
  commit: string;
  train_tokens_per_s: number;
  gen_tokens_per_s_batch1: number;
  gen_tokens_per_s_batch16: number;
}

/** A checkout of `commit` beside this one; `close` removes it. */
export function baselineCheckout(
  root: string,
  commit: string,
): { dir: string; commit: string; close(): void } {
  const full = execFileSync("git", ["rev-parse", "--verify", `${commit}^{commit}`], {
    cwd: root,
    encoding: "utf8",
  }).trim();
  const dir = join(mkdtempSync(join(tmpdir(), "arc-baseline-")), "checkout");
  execFileSync("git", ["worktree", "add", "--detach", dir, full], { cwd: root, stdio: "ignore" });
  const modules = join(dir, "node_modules");
  mkdirSync(join(modules, "@arc"), { recursive: true });
  for (const entry of readdirSync(join(root, "node_modules"))) {
    if (entry !== "@arc") symlinkSync(join(root, "node_modules", entry), join(modules, entry));
  }
  for (const pkg of readdirSync(join(dir, "packages")))
    symlinkSync(join(dir, "packages", pkg), join(modules, "@arc", pkg));
  return {
    dir,
    commit: full,
    close: () => {
      execFileSync("git", ["worktree", "remove", "--force", dir], { cwd: root, stdio: "ignore" });
      rmSync(join(dir, ".."), { recursive: true, force: true });
    },
  };
}

/** One run of the checkout's engine bench at the demo size (`small`). */
export function runBaselineBench(checkout: { dir: string; commit: string }): BaselineFigures {
  execFileSync(process.execPath, ["--import", "tsx", "bench/engine.bench.ts", "--sizes", "small"], {
    cwd: checkout.dir,
    stdio: "ignore",
    timeout: 600_000,
  });
  const figures = JSON.parse(readFileSync(join(checkout.dir, "bench", "results", "engine.json"), "utf8"));
  return {
    commit: checkout.commit.slice(0, 12),
    train_tokens_per_s: figures.train_tokens_per_s,
    gen_tokens_per_s_batch1: figures.gen_tokens_per_s_batch1,
    gen_tokens_per_s_batch16: figures.gen_tokens_per_s_batch16,
  };
}
