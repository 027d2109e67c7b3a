/** The dashboard's style sheet, served as `/ui/assets/dashboard.css`. */
export const dashboardCss = `
:root { color-scheme: light; --ink: #1b2631; --muted: #5d6d7e; --line: #d5dbdb; --accent: #1a5276; --bad: #a93226; --good: #1e8449; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #fbfcfc; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid #f39c12; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: 8px; }
.skip:focus { left: 8px; }
header { display: flex; align-items: center; gap: 16px; padding: 8px 20px; background: var(--ink); color: #fff; }
header .brand { font-weight: 700; font-size: 16px; }
header .who { margin-left: auto; color: #d6eaf8; }
header form { margin: 0; }
header button { background: transparent; color: #fff; border: 1px solid #85929e; border-radius: 4px; padding: 2px 10px; cursor: pointer; }
nav ul { display: flex; flex-wrap: wrap; gap: 4px; list-style: none; margin: 0; padding: 6px 16px; border-bottom: 1px solid var(--line); background: #fff; }
nav a { display: block; padding: 6px 10px; border-radius: 4px; text-decoration: none; }
nav a[aria-current="page"] { background: #d6eaf8; font-weight: 600; }
main { padding: 16px 20px 40px; max-width: 1180px; }
h1 { font-size: 20px; margin: 4px 0 12px; }
h2 { font-size: 16px; margin: 20px 0 8px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 8px 0 16px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; min-width: 150px; background: #fff; }
.card .label { color: var(--muted); font-size: 12px; }
.card .value { font-size: 22px; font-weight: 600; }
table { border-collapse: collapse; width: 100%; background: #fff; margin: 6px 0 14px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.muted { color: var(--muted); }
.status { display: inline-block; padding: 0 6px; border-radius: 3px; background: #eaecee; font-size: 12px; }
.status.failed, .status.rolled_back, .status.rejected { background: #f5b7b1; }
.status.promoted, .status.succeeded, .status.passed { background: #abebc6; }
.status.canary, .status.running { background: #fad7a0; }
.error { border: 1px solid var(--bad); background: #fdedec; padding: 8px 12px; border-radius: 4px; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
figure { margin: 0; }
svg { max-width: 100%; height: auto; background: #fff; border: 1px solid var(--line); border-radius: 6px; }
form.inline { display: inline; }
.action { display: inline-block; text-decoration: none; padding: 4px 12px; border-radius: 4px; border: 1px solid var(--accent); background: #fff; color: var(--accent); cursor: pointer; font: inherit; }
.action.danger { border-color: var(--bad); color: var(--bad); }
label { display: block; margin: 8px 0 4px; font-weight: 600; }
input[type=password], input[type=text], textarea { font: inherit; padding: 6px 8px; width: 100%; max-width: 420px; border: 1px solid #aab7b8; border-radius: 4px; }
pre { white-space: pre-wrap; word-break: break-word; background: #f4f6f6; padding: 8px; border-radius: 4px; max-height: 320px; overflow: auto; }
svg.swatch { border: 0; border-radius: 2px; background: none; vertical-align: baseline; }
form.filters { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: 4px 12px; align-items: end; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; }
form.filters label { font-size: 12px; margin: 0; }
form.filters input, form.filters select { font: inherit; width: 100%; padding: 3px 6px; border: 1px solid #aab7b8; border-radius: 4px; }
.pager { display: flex; gap: 16px; margin: 8px 0; }
.message { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px; margin: 6px 0; background: #fff; }
.message .role { font-size: 12px; font-weight: 600; color: var(--muted); text-transform: uppercase; }
.message.system { background: #f8f9f9; }
.message.user { border-left: 4px solid #2471a3; }
.message.assistant { border-left: 4px solid #1e8449; }
.message.tool { border-left: 4px solid #b9770e; }
.message .text { white-space: pre-wrap; word-break: break-word; }
.message img { max-width: 240px; max-height: 160px; display: block; margin: 4px 0; }
.bar { display: block; height: 10px; background: #85c1e9; border-radius: 2px; min-width: 2px; }
.bar.llm { background: #7dcea0; }
.bar.error { background: #f1948a; }
td.timeline { width: 30%; position: relative; }
.review textarea { max-width: 640px; min-height: 80px; }
`;

/**
 * The dashboard's one script, served as `/ui/assets/live.js`: every 5 s while the tab is visible, a page's
 * `[data-live]` sections are fetched again and swapped in (running training, a canary, teaching); a section holding
 * the focus is left alone, and open `<details>` stay open.
 */
export const liveJs = `
const sections = () => [...document.querySelectorAll("[data-live]")];
async function refresh() {
  if (document.hidden || sections().length === 0) return;
  const response = await fetch(location.href, { headers: { accept: "text/html" }, credentials: "same-origin" });
  if (!response.ok) return;
  const next = new DOMParser().parseFromString(await response.text(), "text/html");
  for (const section of sections()) {
    const fresh = next.getElementById(section.id);
    if (!fresh || section.contains(document.activeElement)) continue;
    const open = [...section.querySelectorAll("details")].map((d) => d.open);
    fresh.querySelectorAll("details").forEach((d, i) => { d.open = open[i] ?? false; });
    section.replaceWith(fresh);
  }
}
setInterval(() => { refresh().catch(() => {}); }, 5000);
`;
