import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import type { Command } from "../packages/server/src/cli/command.ts";
import { commands } from "../packages/server/src/cli/commands/index.ts";
import { documentationFiles } from "./documentation-files.ts";

const README = readFileSync("README.md", "utf8");

/** The code spans of the first column of the README's command table (under "## Command line"). */
function commandTableSpans(readme: string): string[] {
  const section = readme.slice(readme.indexOf("## Command line"));
  const table = section.slice(section.indexOf("| command | what |"));
  const rows = table.split("\n").slice(2);
  const spans: string[] = [];
  for (const row of rows) {
    if (!row.startsWith("|")) break;
    const first = row.split(/(?<!\\)\|/)[1];
    for (const [, code] of first.matchAll(/`([^`]+)`/g)) spans.push(code.replace(/\\\|/g, "|"));
  }
  return spans;
}

/**
 * Every `arc` invocation a page writes, up to a comment: `npx arc ...` anywhere (code blocks and inline code), and
 * `arc ...` at the start of a command in a shell code block.
 */
function npxInvocations(page: string): string[] {
  const npx = [...page.matchAll(/npx arc ([^`\n#]*)/g)].map((m) => `arc ${m[1].trim()}`);
  const shell = [...page.matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)].flatMap((block) =>
    [...block[1].matchAll(/(?:^|[;&|(]\s*|=\S*\s+)arc ([^\n#]*)/gm)].map((m) => `arc ${m[1].trim()}`),
  );
  return [...npx, ...shell];
}

/**
 * What is wrong with `invocation` (`arc <command> [<sub-command>] [args]`) against the real command line: a command
 * that does not exist, a sub-command its help does not list as `arc <command> <sub>`, a flag it does not read.
 */
function problems(invocation: string, known: Command[]): string[] {
  const words = invocation.split(/\s+/);
  if (words[0] !== "arc") return [`\`${invocation}\` does not start with "arc"`];
  // `arc --family <module> <command>`: the one flag arc reads before the command (arc --help)
  while (words[1] === "--family") words.splice(1, 2);
  const name = words[1];
  if (name === "--help" || name === "<command>") return [];
  const command = known.find((c) => c.name === name);
  if (!command) return [`\`${invocation}\`: arc has no command "${name}" (arc --help lists them)`];
  const found: string[] = [];
  const sub = words[2];
  if (sub && /^[a-z][a-z0-9-]*$/.test(sub) && !/\.(ya?ml|json|gguf)$/.test(sub)) {
    const listed = new RegExp(`\\barc ${name} ${sub}\\b`).test(command.help);
    const positional = new RegExp(`\\barc ${name} \\[?<`).test(command.help);
    if (!listed && !positional)
      found.push(`\`${invocation}\`: arc ${name} --help lists no sub-command "${sub}"`);
  }
  for (const [, flag] of words
    .slice(2)
    .join(" ")
    .matchAll(/(?:^|\s)--([a-z][a-z0-9-]*)/g)) {
    if (flag !== "help" && !(flag in command.flags))
      found.push(`\`${invocation}\`: arc ${name} reads no flag --${flag}`);
  }
  return found;
}

describe("the README's commands are the command line's", () => {
  it("names in its command table only commands, sub-commands and flags that arc has", () => {
    const spans = commandTableSpans(README);
    assert.ok(spans.length >= commands.length, `the table lists the commands, found ${spans.length} spans`);
    assert.deepEqual(
      spans.flatMap((span) => problems(span, commands)),
      [],
    );
  });

  it("lists every command of `arc --help` in its command table", () => {
    const listed = new Set(commandTableSpans(README).map((span) => span.split(/\s+/)[1]));
    assert.deepEqual(
      commands.map((c) => c.name).filter((name) => !listed.has(name)),
      [],
      "a command the README's table does not list",
    );
  });

  it("runs only real commands with real flags in its `npx arc` lines, and so do the other READMEs and guides", () => {
    assert.ok(npxInvocations(README).length > 5, "the README shows npx arc commands");
    const wrong = documentationFiles().flatMap((file) =>
      npxInvocations(readFileSync(file, "utf8")).flatMap((invocation) =>
        problems(invocation, commands).map((problem) => `${file}: ${problem}`),
      ),
    );
    assert.deepEqual(wrong, []);
  });

  it("refuses what is not a command line of arc", () => {
    assert.match(problems("arc settings", commands).join(), /no command "settings"/);
    assert.match(problems("arc analytics setting", commands).join(), /no sub-command "setting"/);
    assert.match(problems("arc demo --minute 5", commands).join(), /no flag --minute/);
    assert.match(problems("settings", commands).join(), /does not start with "arc"/);
    assert.deepEqual(problems("arc analytics settings --cost-per-failure 0.4", commands), []);
    assert.deepEqual(problems("arc train recipes/toolcall-sft.yaml trainer.steps=10", commands), []);
    assert.deepEqual(problems("arc --family ./my-family.ts families --json", commands), []);
  });
});
