/**
 * `arc serve` as a child process for restart tests, with the toolcall answer-book models (TEST DOUBLES for trained
 * models) and fast worker loops. Prints one JSON line `{url, key}` once it listens. Config from the environment
 * (ARC_HOME, ARC_PORT...), exactly as `arc serve` reads it.
 */
import { loadServerConfig } from "../../config/server-config.ts";
import { toolcallEvalFixture } from "../../deploy/__fixtures__/toolcall-eval-fixture.ts";
import { toolcallModelPool, toolcallVerdicts } from "../../deploy/__fixtures__/toolcall-models.ts";
import { startServer } from "../start-server.ts";

const fx = toolcallEvalFixture("fixture");
const server = await startServer(loadServerConfig(process.env), {
  release: {
    pool: toolcallModelPool(fx),
    verdicts: toolcallVerdicts(fx),
    deployerIntervalMs: 30,
    validatorIntervalMs: 100,
  },
});
process.stdout.write(`${JSON.stringify({ url: server.url, key: server.credentials?.tenantKey })}\n`);
process.once("SIGTERM", () => {
  void server.close().then(() => process.exit(0));
});
