import { actingTenantHeader } from "../http/auth-middleware.ts";

/** How the dashboard reaches Arc's API: the app's own `fetch`, so every figure on a page is what the API answers. */
export type ApiFetch = (request: Request) => Response | Promise<Response>;

/** An API answer other than 2xx, with the API's own error message. */
export class ApiAnswerError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The API as one signed-in person sees it: their key, and for an admin the tenant they look at. */
export class DashboardApi {
  constructor(
    private readonly fetchApi: ApiFetch,
    private readonly key: string,
    private readonly tenant: string | null = null,
  ) {}

  /** `GET /v1<path>`, parsed. */
  get<T>(path: string): Promise<T> {
    return this.call<T>("GET", path);
  }

  /** `GET /v1/admin<path>` with an admin key, parsed. */
  getAdmin<T>(path: string): Promise<T> {
    return this.call<T>("GET", `/admin${path}`, undefined, false);
  }

  /** `POST /v1<path>` with a JSON body, parsed. */
  post<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>("POST", path, body);
  }

  private async call<T>(method: string, path: string, body?: unknown, asTenant = true): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}` };
    if (this.tenant && asTenant) headers[actingTenantHeader] = this.tenant;
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await this.fetchApi(
      new Request(`http://arc.internal/v1${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const json = (await response.json()) as { error?: { message?: string } };
    if (!response.ok)
      throw new ApiAnswerError(
        response.status,
        json.error?.message ?? `${method} ${path}: ${response.status}`,
      );
    return json as T;
  }
}
