import { html } from "hono/html";
import type { Tenant } from "../../store/tenants.ts";
import { type ApiFetch, DashboardApi } from "../dashboard-api.ts";
import { count, percent } from "../format.ts";
import type { Markup } from "../page-shell.ts";
import { type TrafficAnswer, trafficTotals } from "./overview-page.ts";

/** Tenants (admins only): every tenant with its last 24 hours, and a button to view its pages. */
export async function tenantsPage(fetchApi: ApiFetch, adminKey: string): Promise<Markup> {
  const { data } = await new DashboardApi(fetchApi, adminKey).getAdmin<{ data: Tenant[] }>("/tenants");
  const rows = await Promise.all(
    data.map(async (t) => {
      const traffic = await new DashboardApi(fetchApi, adminKey, t.id).get<TrafficAnswer>(
        "/traffic?hours=24&buckets=1",
      );
      return { tenant: t, totals: trafficTotals(traffic.points) };
    }),
  );
  if (rows.length === 0) return html`<p class="muted">No tenants yet (<code>arc tenants create</code>).</p>`;
  return html`<table>
<thead><tr><th>Tenant</th><th>Id</th><th class="num">Traces, 24 h</th><th class="num">Failure rate</th><th></th></tr></thead>
<tbody>${rows.map(
    ({ tenant, totals }) =>
      html`<tr><td>${tenant.name}</td><td><code>${tenant.id}</code></td><td class="num">${count(totals.traces)}</td><td class="num">${percent(totals.failureRate)}</td><td><form class="inline" method="post" action="/ui/tenants/view"><input type="hidden" name="tenant" value="${tenant.id}"><button class="action" type="submit">View ${tenant.name}</button></form></td></tr>`,
  )}</tbody>
</table>`;
}
