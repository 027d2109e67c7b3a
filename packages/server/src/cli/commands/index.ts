import type { Command } from "../command.ts";
import { analyticsCommand } from "./analytics.ts";
import { annotationsCommand } from "./annotations.ts";
import { datasetsCommand } from "./datasets.ts";
import { demoCommand } from "./demo.ts";
import { deployCommand } from "./deploy.ts";
import { engineCommand } from "./engine.ts";
import { familiesCommand } from "./families.ts";
import { judgesCommand } from "./judges.ts";
import { keysCommand } from "./keys.ts";
import { modelsCommand } from "./models.ts";
import { orchestratorCommand } from "./orchestrator.ts";
import { patternsCommand } from "./patterns.ts";
import { runsCommand } from "./runs.ts";
import { serveCommand } from "./serve.ts";
import { teachingCommand } from "./teaching.ts";
import { tenantsCommand } from "./tenants.ts";
import { tracesCommand } from "./traces.ts";
import { trainCommand } from "./train.ts";
import { verlCommand } from "./verl.ts";

/** Every `arc` command, in the order `arc --help` lists them. One file per command in this folder. */
export const commands: Command[] = [
  serveCommand,
  demoCommand,
  tenantsCommand,
  keysCommand,
  tracesCommand,
  patternsCommand,
  datasetsCommand,
  familiesCommand,
  judgesCommand,
  annotationsCommand,
  engineCommand,
  trainCommand,
  runsCommand,
  verlCommand,
  orchestratorCommand,
  modelsCommand,
  deployCommand,
  teachingCommand,
  analyticsCommand,
];
