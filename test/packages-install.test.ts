import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { commandLacks, skipWithout } from "../scripts/required-parts.mjs";

/**
 * The packages work outside this repository, as a user gets them: packed and installed by the commands of the README's
 * Install section (`npm pack`, which builds them, then `npm install` into new projects), and run from plain Node,
 * without tsx or TypeScript.
 */
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PACKAGES = ["sdk", "core", "engine", "rl", "server"];

function packageJson(name: string) {
  return JSON.parse(readFileSync(join(ROOT, "packages", name, "package.json"), "utf8")) as {
    name: string;
    version?: string;
    license?: string;
    private?: boolean;
    files?: string[];
    exports: Record<string, string>;
    dependencies?: Record<string, string>;
  };
}

/** The source files a package ships compiled: its src/**\/*.ts but tests and their fixtures. */
function shippedSources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "__fixtures__" ? [] : shippedSources(path);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : [];
  });
}

/** The packages a file imports (`import`/`export ... from`, `import "x"`, `import("x")`), by package name. */
function importedPackages(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const names = new Set<string>();
  for (const [, specifier] of text.matchAll(
    /(?:\bfrom|^import|\bimport\()[ \t]*["']([@\w][\w@/.-]*)["']/gm,
  )) {
    if (specifier.startsWith("node:") || builtinModules.includes(specifier)) continue;
    const parts = specifier.split("/");
    names.add(specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]);
  }
  return [...names];
}

describe("each package is fit to install", () => {
  for (const name of PACKAGES) {
    it(`@arc/${name} declares every package its shipped code imports, and a version, license and files`, () => {
      const pkg = packageJson(name);
      assert.equal(pkg.private, undefined, "not private");
      assert.match(pkg.version ?? "", /^\d+\.\d+\.\d+/);
      assert.equal(pkg.license, "MIT");
      assert.ok(pkg.files?.includes("dist"), "ships dist/");
      const undeclared = shippedSources(join(ROOT, "packages", name, "src")).flatMap((file) =>
        importedPackages(file)
          .filter((imported) => imported !== pkg.name && !(imported in (pkg.dependencies ?? {})))
          .map((imported) => `${relative(ROOT, file)} imports ${imported}`),
      );
      assert.deepEqual(undeclared, [], "imported but not in dependencies");
    });
  }

  it("runs the workspace from source: tsconfig.json's paths map each export to the source of its dist file", () => {
    const tsconfig = readFileSync(join(ROOT, "tsconfig.json"), "utf8").replace(/^\s*\/\/.*$/gm, "");
    const paths = (JSON.parse(tsconfig) as { compilerOptions: { paths: Record<string, string[]> } })
      .compilerOptions.paths;
    const expected: Record<string, string[]> = {};
    for (const name of PACKAGES) {
      for (const [subpath, target] of Object.entries(packageJson(name).exports)) {
        const source = target.replace(/^\.\/dist\//, "./src/").replace(/\.js$/, ".ts");
        assert.ok(existsSync(join(ROOT, "packages", name, source)), `${name} ${subpath}: ${source} exists`);
        expected[`@arc/${name}${subpath.slice(1)}`] = [`./packages/${name}/${source.slice(2)}`];
      }
    }
    assert.deepEqual(paths, expected);
  });
});

const noNpm = skipWithout("npm", commandLacks("npm"));

/** Where the README's Install commands keep the tarballs: a folder beside the repository. */
const README_PACKAGES = "../arc-packages";

/** The README's Install block: its commands under each comment ("in this repository", ...), in order. */
function readmeInstallSteps(): { where: string; commands: string[] }[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const block = /^## Install\n[\s\S]*?^```sh\n([\s\S]*?)^```/m.exec(readme)?.[1];
  assert.ok(block, "README.md has an Install section with a sh block");
  const steps: { where: string; commands: string[] }[] = [];
  for (const line of block.split("\n").map((l) => l.trim())) {
    if (line.startsWith("# ")) steps.push({ where: line.slice(2), commands: [] });
    else if (line) steps.at(-1)?.commands.push(line);
  }
  return steps;
}

/** Runs one of the README's commands through bash in `cwd`, its tarball folder moved to `packages`. */
function runReadmeCommand(command: string, cwd: string, packages: string): Promise<string> {
  const env = plainEnv({
    npm_config_prefer_offline: "true",
    npm_config_audit: "false",
    npm_config_fund: "false",
  });
  return run("bash", ["-c", command.replaceAll(README_PACKAGES, packages)], { cwd, env, timeoutMs: 240_000 });
}

/** The environment of plain Node: nothing that would load tsx or point it at this repository. */
function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _options, TSX_TSCONFIG_PATH: _tsconfig, ...env } = process.env;
  return { ...env, PATH: `${dirname(process.execPath)}${delimiter}${env.PATH ?? ""}`, ...extra };
}

/** Runs a command to its end; rejects with what it printed when it fails. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env ?? plainEnv(), timeout: options.timeoutMs, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const how = error.killed ? `was stopped after ${options.timeoutMs} ms` : `exited with ${error.code}`;
        reject(new Error(`${command} ${args.join(" ")} ${how}\n${stdout}\n${stderr}`));
      },
    );
  });
}

describe("the packed packages install with npm and run from plain Node", {
  skip: noNpm,
  timeout: 420_000,
}, () => {
  let temp = "";
  let agentProject = "";
  let project = "";
  let arc = "";
  let serveCommand = "";
  let server: ChildProcess | undefined;

  before(async () => {
    temp = await mkdtemp(join(tmpdir(), "arc-pack-"));
    // the README's folder beside the repository, here in a temporary folder (the test does not write beside it)
    const tarballs = join(temp, "arc-packages");
    agentProject = join(temp, "agent");
    project = join(temp, "project");
    arc = join(project, "node_modules", ".bin", "arc");
    for (const dir of [agentProject, project]) {
      await mkdir(dir);
      await writeFile(
        join(dir, "package.json"),
        JSON.stringify({ name: "consumer", private: true, type: "module" }),
      );
    }
    const [inRepository, inAgent, whereArcRuns, ...rest] = readmeInstallSteps();
    assert.deepEqual(
      [inRepository?.where, inAgent?.where, whereArcRuns?.where, rest.length],
      [
        "in this repository",
        "in your agent's project: the SDK alone, which has no dependencies",
        "where Arc runs: the `arc` CLI (@arc/server) with the packages it needs",
        0,
      ],
    );
    // `npm ci` is left out: this repository is installed already, and it would replace the node_modules this test runs
    // from. Each package's prepack builds the workspace (tsc -b: only what changed); @arc/server's copies in models/.
    assert.equal(inRepository.commands[0], "npm ci");
    for (const command of inRepository.commands.slice(1)) await runReadmeCommand(command, ROOT, tarballs);
    const packed = readdirSync(tarballs).filter((f) => f.endsWith(".tgz"));
    assert.equal(packed.length, PACKAGES.length, `tarballs: ${packed.join(", ")}`);
    for (const command of inAgent.commands) await runReadmeCommand(command, agentProject, tarballs);
    // `npx arc serve` is run by the test that serves, with a port and a home of its own
    serveCommand = whereArcRuns.commands.at(-1) ?? "";
    assert.equal(serveCommand, "npx arc serve");
    for (const command of whereArcRuns.commands.slice(0, -1))
      await runReadmeCommand(command, project, tarballs);
  });

  after(async () => {
    if (server?.pid !== undefined) {
      // npx runs `arc` in a shell of its own: the signal goes to the process group the test started, until it is gone
      const group = -server.pid;
      const alive = () => {
        try {
          process.kill(group, 0);
          return true;
        } catch {
          return false;
        }
      };
      if (alive()) process.kill(group, "SIGINT");
      for (const deadline = Date.now() + 10_000; alive() && Date.now() < deadline; )
        await new Promise((resolve) => setTimeout(resolve, 100));
      if (alive()) process.kill(group, "SIGKILL");
    }
    if (temp) await rm(temp, { recursive: true, force: true });
  });

  it("installs the SDK alone into an agent's project, with no other package", () => {
    assert.deepEqual(
      readdirSync(join(agentProject, "node_modules")).filter((name) => !name.startsWith(".")),
      ["@arc"],
    );
    assert.deepEqual(readdirSync(join(agentProject, "node_modules", "@arc")), ["sdk"]);
  });

  it("installed neither tsx nor TypeScript, and left the repository without the packed copies", () => {
    assert.ok(existsSync(join(project, "node_modules", "@arc", "server", "dist", "cli", "main.js")));
    assert.equal(existsSync(join(project, "node_modules", "tsx")), false);
    assert.equal(existsSync(join(project, "node_modules", "typescript")), false);
    assert.equal(existsSync(join(ROOT, "packages", "server", "models")), false);
    assert.equal(existsSync(join(ROOT, "packages", "server", "recipes")), false);
  });

  it("ships the Python the server runs: the PyTorch worker, VERL's reward module and their requirements", () => {
    const python = join(project, "node_modules", "@arc", "engine", "python");
    for (const file of [
      "arc_torch/worker.py",
      "arc_torch/engine.py",
      "arc_verl/reward.py",
      "arc_verl/check_config.py",
      "requirements.txt",
      "requirements-verl.txt",
      "PROTOCOL.md",
    ]) {
      assert.ok(existsSync(join(python, file)), `@arc/engine ships python/${file}`);
    }
  });

  it("`arc --help` prints the commands", async () => {
    const out = await run(arc, ["--help"], { cwd: project, timeoutMs: 30_000 });
    assert.match(out, /Usage: arc <command>/);
  });

  it("`arc serve` takes a trace that @arc/sdk sends from plain Node", async () => {
    const [npx, ...args] = serveCommand.split(" ");
    server = spawn(npx, [...args, "--port", "0", "--home", join(temp, "home")], {
      cwd: project,
      env: plainEnv(),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const child = server;
    const { url, key } = await new Promise<{ url: string; key: string }>((resolve, reject) => {
      let out = "";
      const take = (d: Buffer) => {
        out += d;
        const url = /listening at (http:\/\/\S+)/.exec(out)?.[1];
        const key = /API key: (\S+)/.exec(out)?.[1];
        if (url && key) resolve({ url, key });
      };
      child.stdout?.on("data", take);
      child.stderr?.on("data", take);
      child.once("exit", (code, signal) => reject(new Error(`arc serve exited (${code ?? signal}): ${out}`)));
    });
    // a plain script: its traces are sent as it ends (the SDK's exit hook), so it calls no shutdown()
    const agent = join(project, "agent.mjs");
    await writeFile(
      agent,
      `import { createArc } from "@arc/sdk";
const arc = createArc();
// an OpenAI client as the SDK sees it: by its shape
const reply = { id: "r", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "fine" } }] };
const client = arc.wrapOpenAI({ chat: { completions: { create: async () => reply } } });
const traceId = await arc.trace("pack-test", async (t) => {
  await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] });
  return t.traceId;
});
console.log(traceId);
`,
    );
    const traceId = (
      await run(process.execPath, [agent], {
        cwd: project,
        env: plainEnv({ ARC_URL: url, ARC_API_KEY: key }),
        timeoutMs: 30_000,
      })
    ).trim();
    const response = await fetch(`${url}/v1/traces/${traceId}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(response.status, 200, `trace ${traceId}`);
    const trace = (await response.json()) as { name: string; steps: { kind: string }[] };
    assert.equal(trace.name, "pack-test");
    assert.deepEqual(
      trace.steps.map((s) => s.kind),
      ["llm"],
    );
  });

  it("`arc train` runs a shipped recipe on a shipped model, and the server finds them in its package", async () => {
    const pkg = join(project, "node_modules", "@arc", "server");
    const out = await run(
      arc,
      [
        "train",
        "recipes/toolcall-dpo.yaml",
        "trainer.steps=1",
        "data.count=16",
        "data.evalCount=4",
        "--runs-dir",
        join(temp, "runs"),
      ],
      { cwd: pkg, timeoutMs: 120_000 },
    );
    assert.equal((JSON.parse(out.trim().split("\n").at(-1) ?? "") as { status: string }).status, "completed");
    const where = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        "const m = await import(process.argv[1]); console.log(JSON.stringify([m.REPOSITORY_ROOT, m.ARC_COMMAND]));",
        pathToFileURL(join(pkg, "dist", "orchestrator", "train-process.js")).href,
      ],
      { cwd: project, timeoutMs: 30_000 },
    );
    assert.deepEqual(JSON.parse(where), [realpathSync(pkg), join(realpathSync(pkg), "bin", "arc.mjs")]);
  });

  it("type-checks a consumer against the installed declarations", async () => {
    await writeFile(
      join(project, "consumer.ts"),
      `import { type Arc, createArc } from "@arc/sdk";
const arc: Arc = createArc({ baseUrl: "http://127.0.0.1:1", apiKey: "k" });
export const id: Promise<string> = arc.trace("t", async (t) => t.traceId);
// @ts-expect-error: not an option
createArc({ notAnOption: 1 });
`,
    );
    await writeFile(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: [],
        },
        files: ["consumer.ts"],
      }),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    await run(process.execPath, [tsc, "-p", join(project, "tsconfig.json")], {
      cwd: project,
      timeoutMs: 60_000,
    });
  });
});
