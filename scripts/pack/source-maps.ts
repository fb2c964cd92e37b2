/**
 * The source maps of a packed tarball must resolve inside it: every `//# sourceMappingURL=` comment of
 * a `.js` or `.d.ts` file names a map the tarball holds, and every `sources` entry of that map names a
 * file the tarball holds (or the map embeds it in `sourcesContent`). A stack trace mapped by
 * `node --enable-source-maps`, a debugger or an editor's "go to definition" then lands on real
 * TypeScript, never on a path that exists only in the monorepo. Used by `check:pack` on every tarball.
 *
 * @module
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, posix } from 'node:path'

// The last `sourceMappingURL` comment of a file (only the last one counts, as in browsers and Node).
const MAPPING_URL = /\/\/# sourceMappingURL=(\S+)\s*$/

// The files that may carry a `sourceMappingURL` comment.
const MAPPED = /\.(?:[cm]?js|d\.[cm]?ts)$/

/** A source-map problem of one tarball: the file and what is wrong. */
export interface SourceMapProblem {
  /** The file the problem is in, relative to the package root (`dist/index.js`). */
  readonly file: string
  readonly problem: string
}

/**
 * Every source-map problem of a package, given its files by path relative to the package root
 * (`dist/index.js` → its text). Files that are not mapped (no comment) are fine; an inline `data:` map
 * is not checked.
 */
export function sourceMapProblems(files: ReadonlyMap<string, string>): SourceMapProblem[] {
  const problems: SourceMapProblem[] = []
  for (const [file, text] of files) {
    if (!MAPPED.test(file)) continue
    const url = MAPPING_URL.exec(text.trimEnd())?.[1]
    if (url === undefined || url.startsWith('data:')) continue
    const map = inPackage(posix.dirname(file), decodeURIComponent(url))
    const json = map === undefined ? undefined : files.get(map)
    if (map === undefined || json === undefined) {
      problems.push({ file, problem: `names the source map \`${url}\`, which the tarball does not hold` })
      continue
    }
    problems.push(...sourceProblems(map, json, files))
  }
  return problems
}

// The problems of one map: unreadable, or a source neither in the tarball nor embedded.
function sourceProblems(map: string, json: string, files: ReadonlyMap<string, string>): SourceMapProblem[] {
  let parsed: { sources?: unknown; sourceRoot?: unknown; sourcesContent?: unknown }
  try {
    parsed = JSON.parse(json) as typeof parsed
  } catch {
    return [{ file: map, problem: 'is not JSON' }]
  }
  if (!Array.isArray(parsed.sources)) return [{ file: map, problem: 'has no `sources` array' }]
  const root = typeof parsed.sourceRoot === 'string' ? parsed.sourceRoot : ''
  const embedded = Array.isArray(parsed.sourcesContent) ? parsed.sourcesContent : []
  return parsed.sources.flatMap((source: unknown, i: number): SourceMapProblem[] => {
    if (typeof embedded[i] === 'string') return []
    const path = typeof source === 'string' ? inPackage(posix.dirname(map), posix.join(root, source)) : undefined
    return path !== undefined && files.has(path)
      ? []
      : [{ file: map, problem: `names the source \`${String(source)}\`, which the tarball does not hold` }]
  })
}

// A path relative to `dir`, resolved within the package; `undefined` when it leaves the package or is a URL.
function inPackage(dir: string, relative: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(relative) || relative.startsWith('/')) return undefined
  const path = posix.normalize(posix.join(dir, relative))
  return path.startsWith('../') || path === '..' ? undefined : path
}

/** The files of a packed tarball (`pnpm pack` output), by path relative to the package root. */
export function tarballFiles(tarball: string): Map<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'flowing-tarball-'))
  try {
    execFileSync('tar', ['-xzf', tarball, '-C', dir])
    const files = new Map<string, string>()
    const walk = (sub: string): void => {
      for (const entry of readdirSync(join(dir, 'package', sub), { withFileTypes: true })) {
        const path = sub === '' ? entry.name : `${sub}/${entry.name}`
        if (entry.isDirectory()) walk(path)
        else files.set(path, readFileSync(join(dir, 'package', path), 'utf8'))
      }
    }
    walk('')
    return files
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Checks the source maps of every tarball; throws listing each problem (at most 5 a tarball) when
 * any has one. Returns how many maps resolved.
 */
export function checkSourceMaps(tarballs: readonly string[]): number {
  let maps = 0
  const report: string[] = []
  for (const tarball of tarballs) {
    const files = tarballFiles(tarball)
    const problems = sourceMapProblems(files)
    maps += [...files.keys()].filter((f) => f.endsWith('.map')).length
    if (problems.length === 0) continue
    report.push(`${posix.basename(tarball)}: ${problems.length} source-map problems, e.g.`)
    for (const p of problems.slice(0, 5)) report.push(`  ${p.file} ${p.problem}`)
  }
  if (report.length > 0) throw new Error(`check:pack — source maps that do not resolve:\n${report.join('\n')}`)
  return maps
}
