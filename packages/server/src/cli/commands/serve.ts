import { loadServerConfig } from "../../config/server-config.ts";
import { credentialsPath } from "../../serve/credentials.ts";
import { startServer } from "../../serve/start-server.ts";
import type { Command } from "../command.ts";
import { intFlag, stringFlag } from "../parse-args.ts";

const help = `arc serve — run the Arc server (ingest API, trace store) on the embedded defaults

Usage: arc serve [--port 7300] [--host 127.0.0.1] [--home .arc] [--database-url postgres://...]

  --port          TCP port (ARC_PORT; default 7300; 0 picks a free one)
  --host          interface to listen on (ARC_HOST; default 127.0.0.1)
  --home          where the embedded database and credentials live (ARC_HOME; default ./.arc)
  --database-url  use this PostgreSQL server instead of the embedded one (DATABASE_URL)

On the first start against a database, Arc makes an admin key, a tenant "default" and a key for it, prints
them and saves them to <home>/credentials.json (readable by you only). Keys are stored hashed: keep that file.
Also: ARC_ADMIN_KEY (an extra admin key to accept), ARC_MAX_BODY_BYTES (default 10 MiB),
ARC_REQUEST_TIMEOUT_MS (time to receive a request whole, default 30000; past it 408),
ARC_DB_QUERY_TIMEOUT_MS (longest an embedded-database statement may run, default 30000).
Stop with Ctrl-C; the database is closed cleanly.`;

/** `arc serve`: runs the Arc server in this process until SIGINT/SIGTERM. */
export const serveCommand: Command = {
  name: "serve",
  summary: "run the Arc server: ingest API, trace store, OTLP endpoint",
  help,
  flags: { port: "string", host: "string", home: "string", "database-url": "string" },
  async run(args) {
    const config = loadServerConfig(process.env, {
      home: stringFlag(args, "home"),
      databaseUrl: stringFlag(args, "database-url"),
      host: stringFlag(args, "host"),
      port: args.flags.port === undefined ? undefined : intFlag(args, "port", 7300),
    });
    const server = await startServer(config);
    const store = config.databaseUrl
      ? "PostgreSQL server"
      : `embedded PostgreSQL (PGlite) in ${config.home}/data`;
    console.log(`Arc is listening at ${server.url}  (store: ${store})`);
    if (server.credentials) {
      console.log(`  tenant "${server.credentials.tenant}" API key: ${server.credentials.tenantKey}`);
      if (server.firstStart) console.log(`  admin key:                  ${server.credentials.adminKey}`);
      console.log(`  (saved in ${credentialsPath(config.home)})`);
    }
    console.log(`  dashboard:    ${server.url}/ui (sign in with an API key)`);
    console.log(`  send traces:  curl -X POST ${server.url}/v1/traces -H "Authorization: Bearer <key>" ...`);
    console.log(
      `  OTLP/HTTP:    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=${server.url}/v1/otlp/v1/traces (http/json)`,
    );
    console.log("Press Ctrl-C to stop.");
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    console.log("stopping...");
    await server.close();
    return 0;
  },
};
