import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

/**
 * A client of Ray's Jobs REST API (the dashboard's `/api/jobs/`, Ray 2.x): submit an entrypoint with a runtime
 * environment, read its status and logs, stop it. Field names are Ray's (`dashboard/modules/job/common.py`).
 */

/** Where a Ray job stands; the last three are terminal. */
export type RayJobStatus = "PENDING" | "RUNNING" | "STOPPED" | "SUCCEEDED" | "FAILED";

/** The terminal statuses: the job's entrypoint has ended and will not run again. */
export const TERMINAL_JOB_STATUSES: readonly RayJobStatus[] = ["STOPPED", "SUCCEEDED", "FAILED"];

/** What `POST /api/jobs/` takes (`JobSubmitRequest`); Ray refuses unknown fields and non-string metadata values. */
export interface RayJobSubmission {
  /** A shell command line, run with `/bin/sh -c` on the head node in the environment of `ray start`. */
  entrypoint: string;
  /** A unique id of the job; Ray answers 500 for one it has seen. */
  submissionId: string;
  /** `env_vars`, `pip`, `py_modules`, a `working_dir` URI (not a local path)… as Ray's runtime environments take them. */
  runtimeEnv?: Record<string, unknown>;
  metadata?: Record<string, string>;
  entrypointNumCpus?: number;
  entrypointNumGpus?: number;
  entrypointResources?: Record<string, number>;
}

/** `GET /api/jobs/{id}` (`JobDetails`), the fields read here; times are Unix milliseconds. */
export interface RayJobDetails {
  submission_id: string;
  status: RayJobStatus;
  entrypoint: string;
  message: string | null;
  error_type: string | null;
  start_time: number | null;
  end_time: number | null;
  metadata: Record<string, string> | null;
  driver_exit_code: number | null;
}

/** A Ray Jobs API answer that was not a success: the status and Ray's own text (often a Python traceback's end). */
export class RayJobsError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "RayJobsError";
  }
}

/** The last line of a traceback Ray sends as its error body (`ValueError: Job with submission_id … exists`). */
function lastLine(text: string): string {
  const lines = text.trim().split("\n").filter(Boolean);
  return (lines.at(-1) ?? "").slice(0, 500);
}

/** Options of a RayJobsClient. */
export interface RayJobsClientOptions {
  /** The dashboard's address, e.g. `http://127.0.0.1:8265`. */
  url: string;
  /** A bearer token, for clusters with token authentication (`RAY_AUTH_MODE=token`). */
  token?: string;
  /** Each request's time limit (default 30 s). */
  timeoutMs?: number;
}

/** Ray's Jobs REST API on one cluster. */
export class RayJobsClient {
  private readonly base: string;

  constructor(private readonly options: RayJobsClientOptions) {
    this.base = options.url.replace(/\/+$/, "");
  }

  /**
   * One call of the API over node:http: Ray refuses a POST that looks like a browser's, and `fetch` marks its
   * requests so (`sec-fetch-mode`).
   */
  private request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = new URL(`${this.base}${path}`);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise<T>((resolve, reject) => {
      const call = send(
        url,
        {
          method,
          headers: {
            ...(payload === undefined
              ? {}
              : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
            ...(this.options.token ? { authorization: `Bearer ${this.options.token}` } : {}),
          },
          timeout: this.options.timeoutMs ?? 30_000,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", reject);
          response.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            const status = response.statusCode ?? 0;
            if (status < 200 || status >= 300)
              reject(
                new RayJobsError(
                  `Ray Jobs API ${method} ${path} answered ${status}: ${lastLine(text) || response.statusMessage}`,
                  status,
                ),
              );
            else {
              try {
                resolve(JSON.parse(text) as T);
              } catch {
                reject(
                  new RayJobsError(`Ray Jobs API ${method} ${path} answered ${status} with no JSON`, status),
                );
              }
            }
          });
        },
      );
      call.on("timeout", () =>
        call.destroy(new Error(`no answer within ${this.options.timeoutMs ?? 30_000} ms`)),
      );
      call.on("error", (error) =>
        reject(
          new RayJobsError(
            `Ray Jobs API at ${this.base} did not answer ${method} ${path}: ${error.message}`,
            0,
          ),
        ),
      );
      call.end(payload);
    });
  }

  /** Submits a job; resolves to its submission id. */
  async submit(job: RayJobSubmission): Promise<string> {
    const answer = await this.request<{ submission_id: string }>("POST", "/api/jobs/", {
      entrypoint: job.entrypoint,
      submission_id: job.submissionId,
      ...(job.runtimeEnv ? { runtime_env: job.runtimeEnv } : {}),
      ...(job.metadata ? { metadata: job.metadata } : {}),
      ...(job.entrypointNumCpus === undefined ? {} : { entrypoint_num_cpus: job.entrypointNumCpus }),
      ...(job.entrypointNumGpus === undefined ? {} : { entrypoint_num_gpus: job.entrypointNumGpus }),
      ...(job.entrypointResources ? { entrypoint_resources: job.entrypointResources } : {}),
    });
    return answer.submission_id;
  }

  /** The job's status and details; a RayJobsError with status 404 when Ray has no such job. */
  job(submissionId: string): Promise<RayJobDetails> {
    return this.request("GET", `/api/jobs/${encodeURIComponent(submissionId)}`);
  }

  /** The job's whole log so far (its entrypoint's stdout and stderr). */
  async logs(submissionId: string): Promise<string> {
    const answer = await this.request<{ logs: string }>(
      "GET",
      `/api/jobs/${encodeURIComponent(submissionId)}/logs`,
    );
    return answer.logs;
  }

  /** Asks Ray to stop the job (SIGTERM to its entrypoint, SIGKILL a few seconds later); false if it had ended. */
  async stop(submissionId: string): Promise<boolean> {
    const answer = await this.request<{ stopped: boolean }>(
      "POST",
      `/api/jobs/${encodeURIComponent(submissionId)}/stop`,
    );
    return answer.stopped;
  }
}
