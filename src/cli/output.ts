/** Prints for people, or one JSON document with --json so scripts can parse it. */
export function emit(json: boolean, data: unknown, human: () => string): void {
  process.stdout.write((json ? JSON.stringify(data) : human()) + "\n");
}

export function table(rows: Array<Record<string, unknown>>, columns: string[]): string {
  const cells = rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? "-" : String(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(columns), ...cells.map(line)].join("\n");
}
