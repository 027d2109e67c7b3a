import { InvalidInputError } from "@arc/core";
import type { Tenant } from "../../store/tenants.ts";
import { arcClient, CLIENT_FLAGS } from "../arc-client.ts";
import type { Command } from "../command.ts";
import { printTable } from "../print-table.ts";

const help = `arc tenants — manage tenants (needs the admin key)

Usage:
  arc tenants create <name>     make a tenant (lower-case letters, digits, - and _), then: arc keys create --tenant <name>
  arc tenants list [--json]     list tenants

Options: --url (ARC_URL), --key (ARC_ADMIN_KEY; default: the admin key in <home>/credentials.json),
--home (ARC_HOME; default ./.arc)`;

/** `arc tenants`: an admin creates and lists tenants. */
export const tenantsCommand: Command = {
  name: "tenants",
  summary: "create and list tenants (admin)",
  help,
  flags: { ...CLIENT_FLAGS, json: "boolean" },
  async run(args) {
    const [action, name] = args.positionals;
    const client = arcClient(args, "admin");
    if (action === "create") {
      if (!name) throw new InvalidInputError("usage: arc tenants create <name>");
      const tenant = await client.request<Tenant>("POST", "/v1/admin/tenants", { name });
      console.log(
        `created tenant ${tenant.name} (${tenant.id}); make it a key with: arc keys create --tenant ${name}`,
      );
      return 0;
    }
    if (action === "list" || action === "ls") {
      const { data } = await client.request<{ data: Tenant[] }>("GET", "/v1/admin/tenants");
      if (args.flags.json) console.log(JSON.stringify(data, null, 2));
      else
        printTable(
          ["NAME", "ID", "CREATED"],
          data.map((t) => [t.name, t.id, t.createdAt]),
        );
      return 0;
    }
    throw new InvalidInputError(
      `unknown action "${action ?? ""}": expected create or list (see arc tenants --help)`,
    );
  },
};
