import { existsSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { InvalidInputError } from "@arc/core";
import type { UpstreamModel } from "../store/model-registry.ts";

/** An OpenAI-compatible server an admin allows tenants to use, by name (config `ARC_UPSTREAMS`). */
export interface AllowedUpstream {
  /** Where OpenAI's client base URL would point, e.g. `http://vllm:8000/v1`. */
  baseUrl: string;
  /** The server environment variable holding its API key; only an admin can name one. */
  apiKeyEnv?: string;
}

/**
 * What a tenant may register over HTTP. Tenants name upstreams from the admin's allowlist (never a URL or an
 * environment variable) and checkpoints under their own artifact folder (or the admin's shipped models folder).
 */
export interface RegistrationPolicy {
  /** ARC_HOME: tenant checkpoints must sit under `<home>/artifacts/<tenantId>/`. */
  home: string;
  /** Upstreams by name (ARC_UPSTREAMS). */
  upstreams: Record<string, AllowedUpstream>;
  /** A read-only folder of shipped checkpoints every tenant may use (ARC_MODELS_DIR), e.g. the repo's `models/`. */
  modelsDir?: string;
}

/** The folder a tenant's own checkpoints live in; relative artifact paths are read from it. */
export function tenantArtifactRoot(policy: RegistrationPolicy, tenantId: string): string {
  return resolve(policy.home, "artifacts", tenantId);
}

function real(path: string): string {
  return existsSync(path) ? realpathSync(path) : path;
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/**
 * The absolute checkpoint folder a tenant asked for, if it sits under the tenant's artifact folder or the shipped
 * models folder (symbolic links resolved, so a link cannot lead out); relative paths are taken from the tenant's
 * artifact folder.
 */
export function resolveArtifactDir(policy: RegistrationPolicy, tenantId: string, asked: string): string {
  const root = tenantArtifactRoot(policy, tenantId);
  const path = resolve(root, asked);
  const roots = [root, ...(policy.modelsDir ? [resolve(policy.modelsDir)] : [])];
  const ok = roots.some((r) => inside(r, path) && inside(real(r), real(path)));
  if (!ok) {
    throw new InvalidInputError(
      `artifactDir: expected a folder under ${join(root, "/")}${policy.modelsDir ? ` or ${join(resolve(policy.modelsDir), "/")}` : ""}, got "${asked}"`,
      { field: "artifactDir" },
    );
  }
  return path;
}

/**
 * The checkpoint folder a tenant registers (see `resolveArtifactDir`), which must exist and hold a checkpoint in the
 * Hugging Face layout: every engine that serves it reads its `config.json` first. A refusal names the path as the
 * tenant wrote it, never the server's folders.
 */
export function resolveCheckpointDir(policy: RegistrationPolicy, tenantId: string, asked: string): string {
  const path = resolveArtifactDir(policy, tenantId, asked);
  const refuse = (problem: string) =>
    new InvalidInputError(`artifactDir: "${asked}" ${problem}`, { field: "artifactDir" });
  if (!existsSync(path)) {
    throw refuse(isAbsolute(asked) ? "does not exist" : "does not exist in your artifact folder");
  }
  if (!statSync(path).isDirectory()) throw refuse("is a file, not a checkpoint folder");
  if (!existsSync(join(path, "config.json"))) {
    throw refuse(
      "holds no config.json: expected a checkpoint in the Hugging Face layout (config.json, model.safetensors, tokenizer.json)",
    );
  }
  return path;
}

/**
 * The stored upstream for an allowlisted upstream name and a model name on it; with `adapter`, a LoRA adapter folder
 * of the tenant's on that base model (its served name is set when the version is registered).
 */
export function resolveUpstream(
  policy: RegistrationPolicy,
  tenantId: string,
  asked: { name: string; model: string; adapter?: string },
): UpstreamModel {
  const allowed = Object.hasOwn(policy.upstreams, asked.name) ? policy.upstreams[asked.name] : undefined;
  if (!allowed) {
    const names = Object.keys(policy.upstreams);
    throw new InvalidInputError(
      `upstream.name: expected one of the upstreams the admin configured (${names.length ? names.join(", ") : "none are configured: ARC_UPSTREAMS"}), got "${asked.name}"`,
      { field: "upstream.name" },
    );
  }
  if (asked.adapter === undefined && /^mv_[0-9a-f]+$/.test(asked.model))
    throw new InvalidInputError(
      `upstream.model: "${asked.model}" is the name an adapter version is served under; name the upstream's own model`,
      { field: "upstream.model" },
    );
  return {
    name: asked.name,
    baseUrl: allowed.baseUrl,
    model: asked.model,
    ...(allowed.apiKeyEnv ? { apiKeyEnv: allowed.apiKeyEnv } : {}),
    ...(asked.adapter === undefined
      ? {}
      : { adapter: { base: asked.model, path: resolveAdapterDir(policy, tenantId, asked.adapter) } }),
  };
}

/** The absolute folder of a tenant's LoRA adapter, which must hold PEFT's `adapter_config.json`. */
function resolveAdapterDir(policy: RegistrationPolicy, tenantId: string, asked: string): string {
  let path: string;
  try {
    path = resolveArtifactDir(policy, tenantId, asked);
  } catch (error) {
    throw new InvalidInputError((error as Error).message.replace(/^artifactDir/, "upstream.adapter"), {
      field: "upstream.adapter",
    });
  }
  if (!existsSync(join(path, "adapter_config.json")))
    throw new InvalidInputError(
      `upstream.adapter: expected a LoRA adapter folder in PEFT's layout (adapter_config.json, adapter_model.safetensors), got "${asked}"`,
      { field: "upstream.adapter" },
    );
  // the folder itself, links resolved: what was checked is what the upstream reads
  return realpathSync(path);
}
