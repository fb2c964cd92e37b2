/**
 * Markdown tables padded to align in a terminal too, so the console output and `RESULTS.md` are the
 * same text.
 *
 * @module
 */

/**
 * Column alignment: numbers read best right-aligned.
 *
 * @group Helpers
 */
export type Align = 'left' | 'right'

/**
 * One column: its header and alignment.
 *
 * @group Helpers
 */
export interface Column {
  readonly header: string
  readonly align: Align
}

/**
 * Renders `rows` (cells as strings, one per column) as an aligned GitHub-flavoured Markdown table.
 *
 * @group Helpers
 */
export function renderTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((c, i) => Math.max(3, c.header.length, ...rows.map((r) => (r[i] ?? '').length)))
  const pad = (text: string, i: number): string => {
    const width = widths[i] as number
    return columns[i]?.align === 'right' ? text.padStart(width) : text.padEnd(width)
  }
  const line = (cells: readonly string[]): string => `| ${columns.map((_, i) => pad(cells[i] ?? '', i)).join(' | ')} |`
  const rule = `|${columns.map((c, i) => (c.align === 'right' ? `${'-'.repeat((widths[i] as number) + 1)}:` : `:${'-'.repeat((widths[i] as number) + 1)}`)).join('|')}|`
  return [line(columns.map((c) => c.header)), rule, ...rows.map(line)].join('\n')
}
