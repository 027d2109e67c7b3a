import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/** Markup as `hono/html` builds it: escaped unless passed through `raw`. */
export type Markup = HtmlEscapedString | Promise<HtmlEscapedString>;

/** The pages of a tenant's dashboard, in the order of the navigation. */
export const tenantPages = [
  { path: "/ui", name: "Overview" },
  { path: "/ui/traces", name: "Traces" },
  { path: "/ui/sessions", name: "Sessions" },
  { path: "/ui/users", name: "Users" },
  { path: "/ui/reviews", name: "Review" },
  { path: "/ui/patterns", name: "Patterns" },
  { path: "/ui/datasets", name: "Datasets" },
  { path: "/ui/runs", name: "Runs" },
  { path: "/ui/models", name: "Models" },
  { path: "/ui/deployments", name: "Deployments" },
  { path: "/ui/teaching", name: "Teaching" },
  { path: "/ui/judges", name: "Judges" },
  { path: "/ui/analytics", name: "Analytics" },
] as const;

/** Who is signed in, as the header shows it. */
export interface Viewer {
  role: "admin" | "tenant";
  /** The tenant whose data the pages show (an admin picks one on the Tenants page). */
  tenant: { id: string; name: string } | null;
}

/** A whole page: header, navigation (the current page marked), and `body` in `<main>`. */
export function pageShell(options: { title: string; current: string; viewer: Viewer; body: Markup }): Markup {
  const { viewer } = options;
  const links = [
    ...(viewer.tenant ? tenantPages : []),
    ...(viewer.role === "admin" ? [{ path: "/ui/tenants", name: "Tenants" }] : []),
  ];
  const who =
    viewer.role === "admin"
      ? `admin${viewer.tenant ? ` · viewing ${viewer.tenant.name}` : ""}`
      : (viewer.tenant?.name ?? "");
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Arc</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/assets/dashboard.css">
<script src="/ui/assets/live.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<span class="brand">Arc</span>
<span class="who">${who}</span>
<form method="post" action="/ui/logout"><button type="submit">Sign out</button></form>
</header>
<nav aria-label="Dashboard">
<ul>
${links.map(
  (l) =>
    html`<li><a href="${l.path}"${l.path === options.current ? html` aria-current="page"` : ""}>${l.name}</a></li>`,
)}
</ul>
</nav>
<main id="main" tabindex="-1">
<h1>${options.title}</h1>
${options.body}
</main>
</body>
</html>`;
}

/** A bare page without navigation: sign-in and errors before sign-in. */
export function barePage(title: string, body: Markup): Markup {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Arc</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/assets/dashboard.css">
</head>
<body>
<main id="main">
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}
