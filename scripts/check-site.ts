/**
 * What a reader of the built docs site (typedoc, `pnpm run docs`) would trip on, found in its HTML:
 *
 * - a page that shows its title twice (more than one `<h1>`: typedoc's own page title and a README's
 *   `# Title`);
 * - an internal link to a page that does not exist, or to an anchor its page does not have (a link
 *   written for GitHub's heading slugs that typedoc slugs differently);
 * - a heading with inline code whose "On This Page" entry lost the code's text.
 *
 * ```text
 * tsx scripts/check-site.ts [dir]     checks a built site (default docs/api); exit 1 listing each problem
 * ```
 * The test `scripts/test/docs-site.test.ts` builds the site into a temporary directory and runs it.
 *
 * @module
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, posix, relative, resolve } from 'node:path'

/** One problem of one page. */
export interface SiteProblem {
  /** The page, relative to the site's root (`documents/Rate_limits.html`). */
  readonly page: string
  readonly problem: string
}

// A page's anchors: every `id` and `name` attribute.
const ANCHOR = /\s(?:id|name)="([^"]*)"/g
// A link's target (links only: `<use href>` and `<link href>` point at assets).
const LINK = /<a\s[^>]*?href="([^"]*)"/g
const H1 = /<h1[\s>][\s\S]*?<\/h1>/g
// A heading with its id and inner HTML.
const HEADING = /<h([1-6])\s[^>]*?id="([^"]*)"[^>]*>([\s\S]*?)<\/h\1>/g
// The "On This Page" block, then each of its entries.
const TOC = /class="tsd-accordion tsd-page-navigation"[\s\S]*?<\/details>/
const TOC_ENTRY = /<a href="#([^"]*)"[^>]*>([\s\S]*?)<\/a>/g

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" }

/** The text of an HTML fragment: tags dropped, the common entities decoded, white space collapsed. */
export function textOf(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_, name: string) => ENTITIES[name] ?? '')
    .replace(/\s+/g, ' ')
    .trim()
}

// Every .html file under `dir`, relative to it with forward slashes.
function pages(dir: string, sub = ''): string[] {
  const entries = readdirSync(join(dir, sub), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))
  return entries.flatMap((entry) => {
    const path = sub === '' ? entry.name : `${sub}/${entry.name}`
    if (entry.isDirectory()) return pages(dir, path)
    return entry.name.endsWith('.html') ? [path] : []
  })
}

/** Every problem of the site built into `dir`. */
export function siteProblems(dir: string): SiteProblem[] {
  const html = new Map(pages(dir).map((page) => [page, readFileSync(join(dir, page), 'utf8')]))
  const anchors = new Map([...html].map(([page, text]) => [page, new Set([...text.matchAll(ANCHOR)].map((m) => m[1]))]))
  const problems: SiteProblem[] = []
  for (const [page, text] of html) {
    const titles = [...text.matchAll(H1)].map((m) => textOf(m[0]))
    if (titles.length > 1) problems.push({ page, problem: `shows its title twice: ${titles.join(' | ')}` })
    problems.push(...linkProblems(dir, page, text, anchors), ...tocProblems(page, text))
  }
  return problems
}

// The links of one page that lead nowhere.
function linkProblems(
  dir: string,
  page: string,
  text: string,
  anchors: ReadonlyMap<string, ReadonlySet<string | undefined>>,
): SiteProblem[] {
  const problems: SiteProblem[] = []
  for (const [, raw = ''] of text.matchAll(LINK)) {
    const href = textOf(raw)
    if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) continue
    const [path = '', fragment = ''] = href.split('#', 2)
    const target = path === '' ? page : posix.normalize(posix.join(posix.dirname(page), decodeURIComponent(path)))
    if (!anchors.has(target)) {
      if (!existsSync(join(dir, target))) problems.push({ page, problem: `links to ${href}: no such page` })
      continue
    }
    if (fragment !== '' && !anchors.get(target)?.has(decodeURIComponent(fragment))) {
      problems.push({ page, problem: `links to ${href}: ${target} has no anchor #${fragment}` })
    }
  }
  return problems
}

// The "On This Page" entries of headings with inline code that lost that code's text.
function tocProblems(page: string, text: string): SiteProblem[] {
  const toc = TOC.exec(text)?.[0]
  if (toc === undefined) return []
  const entries = new Map([...toc.matchAll(TOC_ENTRY)].map((m) => [m[1], textOf(m[2] ?? '')]))
  const problems: SiteProblem[] = []
  for (const [, , id = '', inner = ''] of text.matchAll(HEADING)) {
    const codes = [...inner.matchAll(/<code>([\s\S]*?)<\/code>/g)].map((m) => textOf(m[1] ?? ''))
    const entry = entries.get(id)
    if (entry === undefined || codes.every((code) => entry.includes(code))) continue
    problems.push({ page, problem: `lists the heading "${textOf(inner)}" as "${entry}" in its table of contents` })
  }
  return problems
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const dir = resolve(process.argv[2] ?? join(dirname(import.meta.dirname), 'docs', 'api'))
  const problems = siteProblems(dir)
  for (const p of problems) console.error(`${p.page}: ${p.problem}`)
  console.log(`check-site: ${problems.length} problems in ${relative(process.cwd(), dir) || '.'}`)
  if (problems.length > 0) process.exitCode = 1
}
