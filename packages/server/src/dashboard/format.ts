/** A share as a percentage with one decimal, e.g. `12.5%`; `–` for none. */
export function percent(value: number | null | undefined): string {
  return value === null || value === undefined || !Number.isFinite(value)
    ? "–"
    : `${(value * 100).toFixed(1)}%`;
}

/** A count with thousands separators. */
export function count(value: number): string {
  return value.toLocaleString("en-US");
}

/** A figure with up to `digits` decimals (trailing zeros dropped); `–` for none. */
export function figure(value: unknown, digits = 3): string {
  return typeof value === "number" && Number.isFinite(value) ? String(Number(value.toFixed(digits))) : "–";
}

/** An ISO date-time as `YYYY-MM-DD HH:MM UTC`. */
export function when(iso: string | null | undefined): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : "–";
}
