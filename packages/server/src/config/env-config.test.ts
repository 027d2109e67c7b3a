import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "@arc/core";
import { z } from "zod";
import { type EnvConfigSpec, envFlag, envNumber, parseEnvConfig, readEnvFields } from "./env-config.ts";

const Schema = z.object({
  name: z.string().default("arc"),
  limit: z.number().int().min(1).default(10),
  enabled: z.boolean().default(true),
  nested: z.object({ url: z.string().url() }).optional(),
});
const spec: EnvConfigSpec<keyof z.infer<typeof Schema>> = {
  label: "widget",
  envNames: { name: "W_NAME", limit: "W_LIMIT", enabled: "W_ENABLED", nested: "W_NESTED" },
  convert: { limit: envNumber, enabled: envFlag, nested: (value) => JSON.parse(value) },
  flags: true,
};

describe("env config", () => {
  it("reads set variables through their converters and leaves unset or empty ones to the schema defaults", () => {
    const raw = readEnvFields({ W_LIMIT: "25", W_ENABLED: "Off", W_NAME: "" }, spec);
    assert.deepEqual(raw, { limit: 25, enabled: false });
    assert.deepEqual(parseEnvConfig(Schema, raw, spec), { name: "arc", limit: 25, enabled: false });
  });

  it("treats 0, false, no and off as a switched-off flag and anything else as on", () => {
    assert.deepEqual(
      ["0", "FALSE", "no", "off", "1", "yes", "true"].map((v) => envFlag(v, "W_ENABLED")),
      [false, false, false, false, true, true, true],
    );
  });

  it("throws an InvalidInputError naming the field, its variable, its flag and the path inside it", () => {
    assert.throws(
      () => parseEnvConfig(Schema, readEnvFields({ W_LIMIT: "many" }, spec), spec),
      (error: unknown) =>
        error instanceof InvalidInputError &&
        error.field === "limit" &&
        /^widget limit \(W_LIMIT or --limit\): Expected number, received nan$/.test(error.message),
    );
    assert.throws(
      () => parseEnvConfig(Schema, readEnvFields({ W_NESTED: '{"url":"nope"}' }, spec), spec),
      /widget nested \(W_NESTED or --nested\) at url: Invalid url$/,
    );
    assert.throws(
      () => parseEnvConfig(Schema, { limit: 0 }, { ...spec, flags: false }),
      /: widget limit \(W_LIMIT\): /,
    );
  });
});
