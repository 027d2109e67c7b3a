import { InvalidInputError } from "@arc/core";
import type { ApiKeyInfo } from "../../store/keys.ts";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { type ParsedArgs, stringFlag } from "../parse-args.ts";
import { printTable } from "../print-table.ts";

const help = `arc keys — manage a tenant's API keys (needs the admin key)

Usage:
  arc keys create --tenant <name> [--name <label>]   make a key; it is printed once, Arc keeps only its hash
  arc keys list --tenant <name> [--json]             list a tenant's keys (prefixes only)
  arc keys revoke <key-id>                           revoke a key at once

Options: --url (ARC_URL), --key (ARC_ADMIN_KEY; default: the admin key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

function tenantFlag(args: ParsedArgs): string {
  const tenant = stringFlag(args, "tenant");
  if (!tenant) throw new InvalidInputError("--tenant: expected the tenant's name or id", { field: "tenant" });
  return encodeURIComponent(tenant);
}

/** `arc keys`: an admin manages tenant API keys. */
export const keysCommand: Command = {
  name: "keys",
  summary: "create, list and revoke tenant API keys (admin)",
  help,
  flags: { ...CLIENT_FLAGS, tenant: "string", name: "string", json: "boolean" },
  async run(args) {
    const [action, keyId] = args.positionals;
    const client = arcClient(args, "admin");
    if (action === "create") {
      const made = await client.request<{ id: string; key: string }>(
        "POST",
        `/v1/admin/tenants/${tenantFlag(args)}/keys`,
        { name: stringFlag(args, "name", "") },
      );
      console.log(`key id: ${made.id}\nAPI key (shown once; Arc keeps only its hash):\n${made.key}`);
      return 0;
    }
    if (action === "list" || action === "ls") {
      const { data } = await client.request<{ data: ApiKeyInfo[] }>(
        "GET",
        `/v1/admin/tenants/${tenantFlag(args)}/keys`,
      );
      if (args.flags.json) console.log(JSON.stringify(data, null, 2));
      else
        printTable(
          ["ID", "PREFIX", "NAME", "CREATED", "REVOKED"],
          data.map((k) => [k.id, `${k.keyPrefix}…`, k.name, k.createdAt, k.revokedAt]),
        );
      return 0;
    }
    if (action === "revoke") {
      if (!keyId) throw new InvalidInputError("usage: arc keys revoke <key-id> (see arc keys list)");
      await client.request("DELETE", `/v1/admin/keys/${encodeURIComponent(keyId)}`);
      console.log(`revoked ${keyId}`);
      return 0;
    }
    throw new InvalidInputError(`unknown action "${action ?? ""}": expected create, list or revoke`);
  },
};
