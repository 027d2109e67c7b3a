import { type Context, Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import { html } from "hono/html";
import { HTTPException } from "hono/http-exception";
import { secureHeaders } from "hono/secure-headers";
import type { Recommendation } from "../analytics/recommendations.ts";
import type { Authenticator } from "../http/authenticator.ts";
import type { Principal } from "../store/keys.ts";
import { dashboardCss, liveJs } from "./assets.ts";
import { ApiAnswerError, type ApiFetch, DashboardApi } from "./dashboard-api.ts";
import { barePage, type Markup, pageShell, type Viewer } from "./page-shell.ts";
import { analyticsPage } from "./pages/analytics-page.ts";
import { datasetPage, datasetsPage } from "./pages/datasets-page.ts";
import { confirmActionPage, deploymentPage, deploymentsPage } from "./pages/deployments-page.ts";
import { judgesPage } from "./pages/judges-page.ts";
import { modelPage, modelsPage } from "./pages/models-page.ts";
import { overviewPage } from "./pages/overview-page.ts";
import { patternPage, patternsPage } from "./pages/patterns-page.ts";
import { sessionPage, sessionsPage, userPage, usersPage } from "./pages/people-pages.ts";
import { reviewQueuePage, reviewQueuesPage, traceInQueue } from "./pages/review-pages.ts";
import { runPage, runsPage } from "./pages/runs-page.ts";
import { teachingPage } from "./pages/teaching-page.ts";
import { tenantsPage } from "./pages/tenants-page.ts";
import { type TracePageOptions, tracePage } from "./pages/trace-page.ts";
import { tracesPage } from "./pages/traces-page.ts";
import { recommendationActions } from "./recommendation-actions.ts";
import { reviewFeedback } from "./review-form.ts";

/** The cookie holding the signed-in key (HttpOnly, SameSite=Strict, only sent to `/ui`). */
const sessionCookie = "arc_session";
/** The cookie holding the tenant an admin is looking at. */
const tenantCookie = "arc_tenant";
const cookiePath = "/ui";

type Env = { Variables: { principal: Principal; key: string; viewer: Viewer; api: DashboardApi } };

/** What one page needs: the API as the viewer sees it, the path's parameter and the URL's query. */
type PageBody = (api: DashboardApi, param: string, query: Record<string, string>) => Promise<Markup>;

/** What the dashboard reads from: Arc's API and the keys' authenticator. */
type Deps = { fetchApi: ApiFetch; authenticator: Authenticator };

/** The dashboard's pages: each a path, its title, the navigation entry it lights and the page's body. */
const pages: { path: string; title: (param: string) => string; current: string; body: PageBody }[] = [
  { path: "/", title: () => "Overview", current: "/ui", body: overviewPage },
  { path: "/patterns", title: () => "Patterns", current: "/ui/patterns", body: patternsPage },
  { path: "/patterns/:id", title: (id) => `Pattern ${id}`, current: "/ui/patterns", body: patternPage },
  { path: "/traces", title: () => "Traces", current: "/ui/traces", body: tracesPage },
  {
    path: "/traces/:id",
    title: (id) => `Trace ${id}`,
    current: "/ui/traces",
    body: (api, id, query) => tracePage(api, id, { queue: query.queue }),
  },
  { path: "/reviews", title: () => "Review", current: "/ui/reviews", body: reviewQueuesPage },
  {
    path: "/reviews/:id",
    title: (id) => `Review queue ${id}`,
    current: "/ui/reviews",
    body: reviewQueuePage,
  },
  { path: "/sessions", title: () => "Sessions", current: "/ui/sessions", body: sessionsPage },
  { path: "/sessions/:id", title: (id) => `Session ${id}`, current: "/ui/sessions", body: sessionPage },
  { path: "/users", title: () => "Users", current: "/ui/users", body: usersPage },
  { path: "/users/:id", title: (id) => `User ${id}`, current: "/ui/users", body: userPage },
  { path: "/datasets", title: () => "Datasets", current: "/ui/datasets", body: datasetsPage },
  { path: "/datasets/:id", title: (id) => `Dataset ${id}`, current: "/ui/datasets", body: datasetPage },
  { path: "/runs", title: () => "Runs", current: "/ui/runs", body: runsPage },
  { path: "/runs/:id", title: (id) => `Run ${id}`, current: "/ui/runs", body: runPage },
  { path: "/models", title: () => "Models", current: "/ui/models", body: modelsPage },
  { path: "/models/:id", title: (id) => `Model ${id}`, current: "/ui/models", body: modelPage },
  { path: "/deployments", title: () => "Deployments", current: "/ui/deployments", body: deploymentsPage },
  {
    path: "/deployments/:id",
    title: (id) => `Deployment ${id}`,
    current: "/ui/deployments",
    body: (api, id) => deploymentPage(api, id),
  },
  {
    path: "/deployments/:id/promote",
    title: (id) => `Promote ${id}?`,
    current: "/ui/deployments",
    body: (api, id) => confirmActionPage(api, id, "promote"),
  },
  {
    path: "/deployments/:id/rollback",
    title: (id) => `Roll back ${id}?`,
    current: "/ui/deployments",
    body: (api, id) => confirmActionPage(api, id, "rollback"),
  },
  { path: "/teaching", title: () => "Teaching", current: "/ui/teaching", body: teachingPage },
  { path: "/judges", title: () => "Judges", current: "/ui/judges", body: judgesPage },
  { path: "/analytics", title: () => "Analytics", current: "/ui/analytics", body: analyticsPage },
];

/**
 * The web dashboard under `/ui`, server-rendered: sign in with a tenant or admin key (kept in an HttpOnly,
 * SameSite=Strict cookie and checked on every request, so a revoked key signs out at once), then the tenant's pages.
 * Every figure comes from Arc's own API through `fetchApi`, called with the viewer's key. Form posts must come from
 * the dashboard's own origin (`hono/csrf`); promote and rollback take a confirmation step.
 */
export function dashboardRoutes(deps: Deps) {
  const app = new Hono<Env>();
  guardRequests(app);
  app.get("/assets/dashboard.css", (c) =>
    c.body(dashboardCss, 200, { "content-type": "text/css; charset=utf-8", "cache-control": "max-age=300" }),
  );
  app.get("/assets/live.js", (c) =>
    c.body(liveJs, 200, { "content-type": "text/javascript; charset=utf-8", "cache-control": "max-age=300" }),
  );
  signInRoutes(app, deps.authenticator);
  app.use(signedInViewer(deps));
  tenantRoutes(app, deps);
  for (const page of pages) {
    app.get(page.path, (c) => {
      const param = c.req.param("id") ?? c.req.query("hours") ?? "";
      if (!c.get("viewer").tenant) return c.redirect("/ui/tenants", 303);
      return render(c, page.title(param), page.current, () => page.body(c.get("api"), param, c.req.query()));
    });
  }
  traceFormRoutes(app);
  recommendationRoutes(app);
  deploymentActionRoutes(app);
  // any other path under /ui: a page that says so, in the dashboard's shell, never the API's JSON
  app.all("*", (c) => {
    const viewer = c.get("viewer");
    const body = html`<p class="error" role="alert">No page at ${c.req.path}.</p><p><a href="/ui">Overview</a> · <a href="/ui/traces">Traces</a></p>`;
    return c.html(pageShell({ title: "Not found", current: "", viewer, body }), 404);
  });
  return app;
}

/** Security headers, the error pages, same-origin form posts only and a 16 KiB body limit. */
function guardRequests(app: Hono<Env>) {
  app.use(
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        imgSrc: ["'self'", "data:"],
        frameAncestors: ["'none'"],
        formAction: ["'self'"],
      },
    }),
  );
  app.onError((error, c) => {
    if (error instanceof HTTPException) {
      const why =
        error.status === 403 ? "This form was not sent from the dashboard's own page." : error.message;
      return c.html(barePage("Refused", html`<p class="error" role="alert">${why}</p>`), error.status);
    }
    console.error(error);
    return c.html(
      barePage("Something went wrong", html`<p class="error" role="alert">See the server log.</p>`),
      500,
    );
  });
  app.use(csrf());
  app.use(bodyLimit({ maxSize: 16 * 1024 }));
}

/** Sign in with a key (kept in the session cookie) and sign out. */
function signInRoutes(app: Hono<Env>, authenticator: Authenticator) {
  app.get("/login", (c) => c.html(loginPage()));
  app.post("/login", async (c) => {
    const form = await c.req.parseBody();
    const key = typeof form.key === "string" ? form.key.trim() : "";
    const principal = key ? await authenticator.principalFor(key) : null;
    if (!principal)
      return c.html(loginPage("Unknown or revoked key: paste a tenant key or an admin key."), 401);
    setCookie(c, sessionCookie, key, {
      path: cookiePath,
      httpOnly: true,
      sameSite: "Strict",
      secure: new URL(c.req.url).protocol === "https:",
    });
    deleteCookie(c, tenantCookie, { path: cookiePath });
    return c.redirect(principal.role === "admin" ? "/ui/tenants" : "/ui", 303);
  });
  app.post("/logout", (c) => {
    deleteCookie(c, sessionCookie, { path: cookiePath });
    deleteCookie(c, tenantCookie, { path: cookiePath });
    return c.redirect("/ui/login", 303);
  });
}

/** Every page past sign-in: a signed-in key, and for an admin the tenant picked on the Tenants page. */
function signedInViewer(deps: Deps): MiddlewareHandler<Env> {
  return async (c, next) => {
    const key = getCookie(c, sessionCookie);
    const principal = key ? await deps.authenticator.principalFor(key) : null;
    if (!key || !principal) return c.redirect("/ui/login", 303);
    const picked = principal.role === "admin" ? getCookie(c, tenantCookie) : principal.tenantId;
    const tenant = picked ? await deps.authenticator.tenant(picked) : null;
    c.set("principal", principal);
    c.set("key", key);
    c.set("viewer", { role: principal.role, tenant: tenant && { id: tenant.id, name: tenant.name } });
    c.set(
      "api",
      new DashboardApi(deps.fetchApi, key, principal.role === "admin" ? (tenant?.id ?? null) : null),
    );
    await next();
  };
}

/** The admin's Tenants page and the form that picks the tenant to look at. */
function tenantRoutes(app: Hono<Env>, deps: Deps) {
  app.get("/tenants", async (c) => {
    if (c.get("principal").role !== "admin") return c.redirect("/ui", 303);
    return render(c, "Tenants", "/ui/tenants", () => tenantsPage(deps.fetchApi, c.get("key")));
  });
  app.post("/tenants/view", async (c) => {
    if (c.get("principal").role !== "admin") return c.redirect("/ui", 303);
    const form = await c.req.parseBody();
    const tenant = typeof form.tenant === "string" ? await deps.authenticator.tenant(form.tenant) : null;
    if (!tenant)
      return render(c, "Tenants", "/ui/tenants", async () => html`<p class="error">No such tenant.</p>`);
    setCookie(c, tenantCookie, tenant.id, { path: cookiePath, httpOnly: true, sameSite: "Strict" });
    return c.redirect("/ui", 303);
  });
}

/** A trace's review and label forms; a label given from a review queue leads to the next trace waiting in it. */
function traceFormRoutes(app: Hono<Env>) {
  app.post("/traces/:id/feedback", async (c) => {
    const id = c.req.param("id");
    const title = `Trace ${id}`;
    let notice = "Review saved.";
    let refused = false;
    try {
      await c.get("api").post("/feedback", [reviewFeedback(id, await c.req.parseBody())]);
    } catch (error) {
      if (!(error instanceof ApiAnswerError)) throw error;
      notice = `The review was refused: ${error.message}`;
      refused = true;
    }
    return render(c, title, "/ui/traces", () =>
      tracePage(c.get("api"), id, { notice, refused, about: "review" }),
    );
  });

  app.post("/traces/:id/annotations", async (c) => {
    const id = c.req.param("id");
    const queue = c.req.query("queue");
    const form = await c.req.parseBody();
    const field = (name: string) =>
      typeof form[name] === "string" && form[name].trim() ? form[name].trim() : undefined;
    const options: TracePageOptions = { notice: "Label saved.", about: "label", queue };
    try {
      await c.get("api").post("/annotations", {
        traceId: id,
        label: field("label"),
        class: field("class"),
        rationale: field("rationale"),
      });
      if (queue) {
        const waiting = await c
          .get("api")
          .get<{ data: { traceId: string }[] }>(`/review-queues/${encodeURIComponent(queue)}?limit=1`);
        if (waiting.data[0]) options.next = traceInQueue(waiting.data[0].traceId, queue);
        else options.notice = `Label saved. Nothing else waits in ${queue}.`;
      }
    } catch (error) {
      if (!(error instanceof ApiAnswerError)) throw error;
      options.notice = `The label was refused: ${error.message}`;
      options.refused = true;
    }
    return render(c, `Trace ${id}`, "/ui/traces", () => tracePage(c.get("api"), id, options));
  });
}

/** The Analytics page's recommendation buttons; a refusal shows on the Analytics page. */
function recommendationRoutes(app: Hono<Env>) {
  app.post("/recommendations/:kind", async (c) => {
    const action = recommendationActions[c.req.param("kind") as Recommendation["kind"]];
    if (!action) return c.redirect("/ui/analytics", 303);
    const form = await c.req.parseBody();
    try {
      return c.redirect(await action.take(c.get("api"), typeof form.id === "string" ? form.id : ""), 303);
    } catch (error) {
      if (!(error instanceof ApiAnswerError)) throw error;
      const refusal = `${action.label} was refused: ${error.message}`;
      return render(c, "Analytics", "/ui/analytics", () => analyticsPage(c.get("api"), "", {}, refusal));
    }
  });
}

/** Promote and rollback, each after its confirmation page; the outcome shows on the deployment's page. */
function deploymentActionRoutes(app: Hono<Env>) {
  for (const action of ["promote", "rollback"] as const) {
    app.post(`/deployments/:id/${action}`, async (c) => {
      const id = c.req.param("id");
      const form = await c.req.parseBody();
      const reason = typeof form.reason === "string" && form.reason.trim() ? form.reason.trim() : undefined;
      const title = `Deployment ${id}`;
      try {
        await c.get("api").post(`/deployments/${encodeURIComponent(id)}/${action}`, reason ? { reason } : {});
      } catch (error) {
        if (!(error instanceof ApiAnswerError)) throw error;
        return render(c, title, "/ui/deployments", () =>
          deploymentPage(c.get("api"), id, `The ${action} was refused: ${error.message}`, true),
        );
      }
      return render(c, title, "/ui/deployments", () =>
        deploymentPage(c.get("api"), id, action === "promote" ? "Promoted." : "Rolled back."),
      );
    });
  }
}

/** Renders a page in the shell; an API refusal (404, 400...) becomes a page that says what was refused. */
async function render(c: Context<Env>, title: string, current: string, body: () => Promise<Markup>) {
  const viewer = c.get("viewer");
  try {
    return c.html(pageShell({ title, current, viewer, body: await body() }));
  } catch (error) {
    if (!(error instanceof ApiAnswerError)) throw error;
    return c.html(
      pageShell({ title, current, viewer, body: html`<p class="error" role="alert">${error.message}</p>` }),
      error.status >= 500 ? 502 : (error.status as 400 | 403 | 404 | 409),
    );
  }
}

function loginPage(error?: string): Markup {
  return barePage(
    "Sign in to Arc",
    html`${error ? html`<p class="error" role="alert">${error}</p>` : ""}
<form method="post" action="/ui/login">
<label for="key">API key</label>
<input id="key" name="key" type="password" autocomplete="current-password" required autofocus>
<p class="muted">A tenant key shows that tenant's pages; an admin key shows every tenant.</p>
<p><button class="action" type="submit">Sign in</button></p>
</form>`,
  );
}
