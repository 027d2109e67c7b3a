export { barChartSvg, esc, lineChartSvg, niceTicks, type Series } from "./svg-charts.ts";
