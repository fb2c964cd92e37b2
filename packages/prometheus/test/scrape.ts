/** Reading a scrape: the value of one sample, the HELP/TYPE lines of one metric. */

/** Every sample line of `text`, as `name{labels}` → value (labels as prom-client prints them). */
export function samples(text: string): Map<string, number> {
  const found = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const space = line.lastIndexOf(' ')
    found.set(line.slice(0, space), Number(line.slice(space + 1)))
  }
  return found
}

/** The value of `name` with exactly `labels` (in any order), or undefined when there is no such sample. */
export function value(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(',')
  for (const [series, v] of samples(text)) {
    const brace = series.indexOf('{')
    const seriesName = brace === -1 ? series : series.slice(0, brace)
    if (seriesName !== name) continue
    const got =
      brace === -1
        ? ''
        : series
            .slice(brace + 1, -1)
            .split(',')
            .sort()
            .join(',')
    if (got === want) return v
  }
  return undefined
}

/** The metric names that have a `# TYPE` line, with their type. */
export function types(text: string): Map<string, string> {
  const found = new Map<string, string>()
  for (const line of text.split('\n')) {
    const m = /^# TYPE (\S+) (\S+)$/.exec(line)
    if (m !== null) found.set(m[1] as string, m[2] as string)
  }
  return found
}
