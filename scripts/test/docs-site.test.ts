import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { siteProblems } from '../check-site.js'

const root = resolve(import.meta.dirname, '../..')

// A page as typedoc writes one: a title, then the content with its headings, then "On This Page".
function page(title: string, body: string, toc = ''): string {
  return `<html><body><h1>${title}</h1>${body}
<details class="tsd-accordion tsd-page-navigation"><summary>On This Page</summary>${toc}</details></body></html>`
}

describe('siteProblems()', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'flowing-site-'))
    mkdirSync(join(dir, 'documents'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('passes pages with one title, links that land and a table of contents that keeps inline code', () => {
    const heading = '<h2 id="add-versus-post" class="tsd-anchor-link"><code>add</code> versus <code>post</code></h2>'
    writeFileSync(join(dir, 'index.html'), page('Flowing', '<a href="documents/guide.html#add-versus-post">x</a>'))
    const toc = '<a href="#add-versus-post"><span>add versus post</span></a>'
    writeFileSync(join(dir, 'documents/guide.html'), page('Guide', `${heading}<a href="../index.html">home</a>`, toc))
    expect(siteProblems(dir)).toEqual([])
  })

  it('finds a title shown twice, a broken anchor, a missing page and a table of contents that lost code', () => {
    writeFileSync(join(dir, 'index.html'), page('Flowing', '<h1 id="flowing">Flowing</h1><a href="gone.html">x</a>'))
    const heading = '<h2 id="versus" class="tsd-anchor-link"><code>add</code> versus <code>post</code></h2>'
    const toc = '<a href="#versus"><span> versus </span></a>'
    writeFileSync(join(dir, 'documents/guide.html'), page('Guide', `${heading}<a href="#add-versus-post">x</a>`, toc))
    expect(siteProblems(dir)).toEqual([
      {
        page: 'documents/guide.html',
        problem: 'links to #add-versus-post: documents/guide.html has no anchor #add-versus-post',
      },
      {
        page: 'documents/guide.html',
        problem: 'lists the heading "add versus post" as "versus" in its table of contents',
      },
      { page: 'index.html', problem: 'shows its title twice: Flowing | Flowing' },
      { page: 'index.html', problem: 'links to gone.html: no such page' },
    ])
  })
})

describe('the docs site, as `pnpm run docs` builds it', () => {
  let out: string
  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'flowing-docs-'))
    // Exits non-zero on any warning (typedoc.json: treatWarningsAsErrors), e.g. an unexported type.
    execFileSync(process.execPath, [join(root, 'node_modules/typedoc/bin/typedoc'), '--out', out], {
      cwd: root,
      stdio: 'pipe',
    })
  }, 180_000)
  afterAll(() => rmSync(out, { recursive: true, force: true }))

  it('shows each title once, keeps inline code in its tables of contents, and has no broken internal link', () => {
    expect(siteProblems(out)).toEqual([])
  })

  it("keeps the loop's internals out of Loop's page: readmit, sideTableSize and the constructor", () => {
    const loop = readFileSync(join(out, 'classes/_flowing_core.Loop.html'), 'utf8')
    expect(loop).toContain('id="request"')
    for (const internal of ['readmit', 'sidetablesize', 'constructor']) expect(loop).not.toContain(`id="${internal}"`)
  })
})
