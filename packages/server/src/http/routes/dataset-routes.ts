import { InvalidInputError, NotFoundError, toInvalidInputError } from "@arc/core";
import { Hono } from "hono";
import { z } from "zod";
import {
  deleteDatasetSchedule,
  listDatasetSchedules,
  putDatasetSchedule,
} from "../../failures/dataset-schedules.ts";
import { getDataset, listDatasets } from "../../failures/dataset-store.ts";
import { datasetImageRefs, exportDataset } from "../../failures/export-dataset.ts";
import type { RegistrySetup } from "../../failures/failure-pipeline-config.ts";
import { loadImages } from "../../failures/image-store.ts";
import { DatasetRequest, parseDatasetRequest, synthesizeDataset } from "../../failures/synthesize-dataset.ts";
import { tenantTaskFamilies } from "../../families/task-family-store.ts";
import type { Database } from "../../store/database.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

const ListQuery = z
  .object({
    kind: z.enum(["eval", "prompts", "preferences"]).optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
  })
  .strict();

/** The longest interval a dataset schedule takes: a year, well inside what a date and a bigint column hold. */
const MAX_SCHEDULE_EVERY_MS = 366 * 24 * 3600 * 1000;

const ScheduleBody = z
  .object({
    everyMs: z
      .number()
      .int()
      .min(1000)
      .max(MAX_SCHEDULE_EVERY_MS)
      .describe("how often to synthesize, in ms (at least 1000, at most a year)"),
    request: DatasetRequest,
  })
  .strict();

/**
 * `POST /v1/datasets` (synthesize now: 201 with the new dataset, or 200 with the stored one of identical content),
 * `GET /v1/datasets`, `GET /v1/datasets/:id` (with rows), `GET /v1/datasets/:id/export?format=`, and schedules:
 * `GET /v1/dataset-schedules`, `PUT|DELETE /v1/dataset-schedules/:name`.
 */
export function datasetRoutes(deps: { db: Database; maxBodyBytes: number; setupRegistry?: RegistrySetup }) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post("/datasets", async (c) => {
    const request = parseDatasetRequest(await readJson(c, deps.maxBodyBytes));
    const { dataset, created } = await synthesizeDataset(deps.db, c.get("tenantId"), request, {
      createdBy: "api",
      setupRegistry: deps.setupRegistry,
    });
    return c.json({ ...dataset, created }, created ? 201 : 200);
  });

  app.get("/datasets", async (c) => {
    const parsed = ListQuery.safeParse(c.req.query());
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    return c.json({ data: await listDatasets(deps.db, c.get("tenantId"), parsed.data) });
  });

  app.get("/datasets/:id", async (c) =>
    c.json(await getDataset(deps.db, c.get("tenantId"), c.req.param("id"))),
  );

  app.get("/datasets/:id/export", async (c) => {
    const format = c.req.query("format");
    if (!format) {
      throw new InvalidInputError("format: expected ?format=jsonl, chat, preferences or verl-parquet", {
        field: "format",
      });
    }
    const tenantId = c.get("tenantId");
    const dataset = await getDataset(deps.db, tenantId, c.req.param("id"));
    const images = await loadImages(deps.db, tenantId, datasetImageRefs(dataset));
    const out = exportDataset(dataset, format, await tenantTaskFamilies(deps.db, tenantId), images);
    return c.body(out.body, 200, {
      "content-type": out.contentType,
      "content-disposition": `attachment; filename="${out.fileName}"`,
      "x-arc-dataset-version": dataset.version,
    });
  });

  app.get("/images/:ref", async (c) => {
    const ref = c.req.param("ref");
    const image = (await loadImages(deps.db, c.get("tenantId"), [ref])).get(ref);
    if (!image)
      throw new NotFoundError(`image ${JSON.stringify(ref)}: no dataset row of this tenant refers to it`);
    return c.body(new Uint8Array(Buffer.from(image.data, "base64")), 200, {
      "content-type": image.mediaType,
      "cache-control": "private, max-age=31536000, immutable",
    });
  });

  app.get("/dataset-schedules", async (c) =>
    c.json({ data: await listDatasetSchedules(deps.db, c.get("tenantId")) }),
  );

  app.put("/dataset-schedules/:name", async (c) => {
    const parsed = ScheduleBody.safeParse(await readJson(c, deps.maxBodyBytes));
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    const name = c.req.param("name");
    return c.json(
      await putDatasetSchedule(deps.db, c.get("tenantId"), name, parsed.data.everyMs, parsed.data.request),
    );
  });

  app.delete("/dataset-schedules/:name", async (c) => {
    await deleteDatasetSchedule(deps.db, c.get("tenantId"), c.req.param("name"));
    return c.body(null, 204);
  });

  return app;
}
