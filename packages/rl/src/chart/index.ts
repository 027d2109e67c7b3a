export { type LineChartOptions, lineChartSvg, type Series } from "./line-chart-svg.ts";
