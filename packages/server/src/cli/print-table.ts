/** Prints rows as an aligned text table with a header; `(none)` when there are no rows. */
export function printTable(columns: string[], rows: (string | number | null | undefined)[][]): void {
  if (rows.length === 0) {
    console.log("(none)");
    return;
  }
  const cells = rows.map((row) =>
    row.map((cell) => (cell === null || cell === undefined ? "-" : String(cell))),
  );
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  console.log(line(columns));
  for (const row of cells) console.log(line(row));
}
