import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { documentationFiles } from "./documentation-files.ts";

/**
 * The documentation describes the product as it is: what it does, how to use it, its figures with the command that
 * measures them. It keeps no record of how the project was built: which run on which day measured what, what was
 * committed until when, figures "now" or "here" with no machine and date. These rules find that record's usual
 * phrasing; each is narrow enough to leave product text alone (the examples at the end of this file hold both sides).
 */
const ORDINALS_TO_TENTH = [
  "first",
  "second",
  "third",
  "fourth",
  "fifth",
  "sixth",
  "seventh",
  "eighth",
  "ninth",
  "tenth",
];
/** Word ordinals past ten: product text counts steps and items in digits, so these only ever number sessions or runs. */
const HIGH_ORDINAL =
  "(?:eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|thirtieth|fortieth|fiftieth|(?:twenty|thirty|forty|fifty)-(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth))";
const NUMERIC_ORDINAL = String.raw`\d+(?:st|nd|rd|th)`;
const ANY_ORDINAL = `(?:${ORDINALS_TO_TENTH.join("|")}|${HIGH_ORDINAL}|${NUMERIC_ORDINAL})`;
/** From "second" on: "the first run" and "the first day" are ordinary product words. */
const LATER_ORDINAL = `(?:${ORDINALS_TO_TENTH.slice(1).join("|")}|${HIGH_ORDINAL}|${NUMERIC_ORDINAL})`;
const MONTH =
  "(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)";

const HISTORY_RULES: { name: string; pattern: RegExp }[] = [
  {
    name: "an ordinal session",
    pattern: new RegExp(String.raw`\b${ANY_ORDINAL}[\s-]+(?:sessions?|sittings?)\b`, "i"),
  },
  { name: "an ordinal word past ten", pattern: new RegExp(String.raw`\b${HIGH_ORDINAL}\b`, "i") },
  {
    name: "an ordinal run or day",
    pattern: new RegExp(String.raw`\b${LATER_ORDINAL}\s+(?:runs?|days?)\b(?!\s+of\s+the\s+same\b)`, "i"),
  },
  {
    name: "a session as a time",
    pattern: /\b(?:this|that|earlier|previous|prior|last|next|later|former)\s+session(?:'s|s)?\b/i,
  },
  { name: "numbered sessions", pattern: /\bsessions?\s+\d+/i },
  {
    name: "until / since the Nth",
    pattern: new RegExp(
      String.raw`\b(?:until|till|since)\s+the\s+${LATER_ORDINAL}\b(?!\s+(?:steps?|tokens?|bytes?|rows?|attempts?|retry|retries|stages?|calls?|requests?|positions?|items?|lines?|batch(?:es)?|epochs?|turns?|messages?|chunks?)\b)`,
      "i",
    ),
  },
  { name: "committed until", pattern: /\bcommitted\s+(?:until|till|since|before|after)\b/i },
  {
    name: "an earlier run or machine",
    pattern:
      /\b(?:in|than|as in|during|on)\s+(?:an?|the)\s+(?:earlier|prior|former|previous|older)\s+(?:runs?|sessions?|measurements?|machines?|clones?|benches|bench runs?)\b/i,
  },
  {
    name: "earlier measurements",
    pattern: /\b(?:earlier|previous|older|former)\s+(?:sessions|figures|measurements)\b/i,
  },
  {
    name: "this machine's run",
    pattern:
      /\b(?:this|that|the same|another|an? (?:earlier|previous|older|other|slower|faster|different)) machine's\s+(?:runs?|figures?|measurements?|numbers?|results?)\b/i,
  },
  {
    name: "a commit as a point in time",
    pattern:
      /\b(?:at|before|after|since|until|from|of)\s+(?:commit\s+)?`(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}`|\b(?:fresh clones?|working tree|checkout)\s+at\s+`?[0-9a-f]{7,40}\b|\bgit show [0-9a-f]{7,40}:/i,
  },
  {
    name: "the date of a run",
    pattern: new RegExp(
      String.raw`\b(?:measured|ran|run|trained|taken|recorded|benchmarked|made)\s+(?:on|at)\s+(?:\d{4}-\d{2}-\d{2}\b|${MONTH}\.? \d{1,2}\b|\d{1,2} ${MONTH}\b)|\b(?:on|as of)\s+${MONTH}\.? \d{1,2}, \d{4}\b`,
      "i",
    ),
  },
  {
    name: "figures dated by 'now'",
    pattern: /\bfigures?\s+(?:now|today|at present|currently|as of now|of late)\b/i,
  },
];

/** A figure as the docs write one: a decimal, a number with thousands separators, a percentage, a ratio or a time or rate. */
const FIGURE =
  /\d+\.\d+|\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s?%|\d+(?:\.\d+)?×|\b\d+\s?(?:ms|s|min|minutes|(?:tokens|steps|calls|traces|requests)\/s|GFLOP\/s)(?![\w/])/;
/** Where a measurement took place, said without naming the machine or the date. */
const UNNAMED_PLACE = /\bhere\b|\b(?:this|our)\s+(?:[\w-]+\s+){0,3}machines?\b/i;

/**
 * The sentences (and table rows) of `text` that state a figure measured "here" or on "this machine": the reader cannot
 * tell which machine or when, so such a figure names the machine and date of its results file, or links to
 * docs/benchmarks.md, which does.
 */
function figuresWithoutPlace(text: string): string[] {
  const found: string[] = [];
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split("\n");
    const rows = lines.filter((line) => line.trimStart().startsWith("|"));
    const prose = lines.filter((line) => !line.trimStart().startsWith("|")).join(" ");
    for (const sentence of [...rows, ...prose.split(/(?<=[.!?;])\s+/)]) {
      if (FIGURE.test(sentence) && UNNAMED_PLACE.test(sentence))
        found.push(`[a figure measured "here"] …${sentence.trim().replace(/\s+/g, " ").slice(0, 110)}…`);
    }
  }
  return found;
}

/** The lines of `text` some rule matches: `line: [rules] …the words around the first match…`. */
function historyPhrasing(text: string): string[] {
  const found: string[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    const matches = HISTORY_RULES.map(({ name, pattern }) => ({ name, match: pattern.exec(line) })).filter(
      (m) => m.match !== null,
    );
    if (matches.length === 0) continue;
    const at = (matches[0].match as RegExpExecArray).index;
    const words = line.slice(Math.max(0, at - 30), at + 70).trim();
    found.push(`${i + 1}: [${matches.map((m) => m.name).join("; ")}] …${words}…`);
  }
  return found;
}

describe("documentation describes the product, not how it was built", () => {
  it("finds the READMEs and the guides under docs/", () => {
    const files = documentationFiles();
    for (const expected of ["README.md", "models/README.md", join("packages", "server", "README.md")])
      assert.ok(files.includes(expected), `${expected} is checked`);
  });

  it("has no development-history phrasing in any README or docs/ page", () => {
    const offenders = documentationFiles().flatMap((file) =>
      historyPhrasing(readFileSync(file, "utf8")).map((hit) => `${file}:${hit}`),
    );
    assert.equal(
      offenders.length,
      0,
      `development history in the docs; write what the product does now, with the command that shows it:\n${offenders.join("\n")}`,
    );
  });

  it("states no figure measured 'here' or on 'this machine' in any README or docs/ page", () => {
    const offenders = documentationFiles().flatMap((file) =>
      figuresWithoutPlace(readFileSync(file, "utf8")).map((hit) => `${file}: ${hit}`),
    );
    assert.deepEqual(
      offenders,
      [],
      "name the machine and date of the results file, or link to docs/benchmarks.md",
    );
  });

  it("flags a figure whose machine is 'here' or 'this machine'", () => {
    for (const text of [
      "a 135M model trains here at 27 tokens/s",
      "`npm run bench:remote` runs them both ways on this 2-core AMD\nEPYC machine: DPO ends at 0.125.",
      "| bare proxy (the floor on this machine) | +0.363 ms |",
      "Measured here, the gateway keeps 0.83 of the upstream's throughput.",
      "about 1.6× faster on our machine",
    ]) {
      assert.notDeepEqual(figuresWithoutPlace(text), [], text);
    }
    for (const text of [
      "Every trace carries an id generated here (`crypto.randomUUID()`).",
      "On 2 cores, Intel Xeon, 2026-12-06: 7.41 s without the cache, 0.51 s with it.",
      "Canaries happen here.\n\nThe gateway keeps 0.83 of the upstream's throughput ([benchmarks](benchmarks.md)).",
      "a checkpoint of a size the machine holds loads; 0.84M parameters in the demo model",
    ]) {
      assert.deepEqual(figuresWithoutPlace(text), [], text);
    }
  });

  it("flags the phrasing of a lab notebook", () => {
    for (const text of [
      "Twenty-first session, a slower machine, fresh clone: 0.207 → 0.094",
      "the nineteenth run moved it to 0.12",
      "measured in the seventeenth session, 13.8 min each",
      "Earlier figures (seventh session, another machine, load average 7-9)",
      "the third session's 800 steps failed all of production",
      "this machine's run of the bench took 22 min",
      "1.40× in an earlier run of the same command",
      "SFT + verdict GRPO (committed until the twentieth session)",
      "until the 20th session a closed worker reported 0",
      "Since the nineteenth session the samples share one prefill",
      "What the earlier base models taught (sessions 1-11)",
      "DPO after the warm-up gives back a point (this session 0.063 → 0.066)",
      "the warm-up got 859-990 steps (fresh clone at `88a61dc`)",
      "the code before and after `05c5126`, run one after the other",
      "the full record is `git show 0c641d7:models/README.md`",
      "the fourth day of the search",
      "measured on 2026-03-14 with an idle machine",
      "trained on March 3 on a shared core",
      "**Figures now:** production failure rate 0.219 on 512 tasks",
      "The figures today: 0.875 agreement",
    ]) {
      assert.notDeepEqual(historyPhrasing(text), [], text);
    }
  });

  it("leaves product text alone", () => {
    for (const text of [
      "On the first start, Arc makes an admin key and a tenant `default`.",
      "Requests are sticky per `x-arc-session`, else `x-arc-user`; calls of the same session go to the same arm.",
      "A run whose heartbeat is older than 60 s is resumed from its last checkpoint; after the third attempt it fails.",
      "A second run of the same recipe writes the same bytes.",
      "until the second step the learning rate warms up; after the first token it streams",
      "the 99th percentile of the paired differences",
      "a slower machine trains fewer warm-up steps, so the demo prints its plan",
      "On a fresh clone, `npm ci` succeeds and leaves `git status` clean.",
      "production's third phrasing of bookings and currencies",
      '{"id":"t-1","startedAt":"2026-01-01T00:00:00Z"}',
      "| SDK overhead per wrapped call, p99 | +0.31 ms | < 1 ms | `npm run bench` | 2 cores, Intel Xeon | 2026-05-01 |",
      "measured on 2 cores; the figures are medians of 5 runs",
      "the cooldown since the tenant's last run",
      "`Put Gym in my calendar for March 20 at 3pm`",
      "a sessionId groups a user's traces; one session, one trace per turn",
      "the previous run's checkpoint is the starting point of `arc train --resume`",
      "What `base-model.json` records: the failure rate on 512 production tasks (seed 1000: 0.219)",
      "the figures of this page, with their machine and date",
    ]) {
      assert.deepEqual(historyPhrasing(text), [], text);
    }
  });
});
