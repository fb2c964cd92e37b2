// A typedoc plugin for the site's navigation:
// - each package's module page shows that package's README.md, the way typedoc's `packages` entry
//   point strategy would, while the site keeps one program (resolve strategy) and one validation pass;
//   links to `packages/<name>/README.md` anywhere in the docs resolve to that page;
// - the project documents (docs/guides, docs/architecture.md, docs/design) are titled by their first
//   heading, grouped as Guides or Design notes, and listed in reading order;
// - the members of `Loop` are grouped by topic (Handlers, Posting, Lifecycle, …);
// - the site's index and each module page drop their README's `# Title` line: typedoc already heads
//   the page with the project's or module's name, so the title showed twice;
// - a heading's inline code counts in its anchor and its "On This Page" entry (typedoc takes only
//   plain text: `## \`add\` versus \`post\`` became `#versus`, so links written for GitHub broke).
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Application, Comment, CommentTag, Converter, MinimalSourceFile, normalizePath, ReflectionKind } from 'typedoc'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

// Reading order; documents not listed follow, in file-name order.
const ORDER = [
  'guides/getting-started',
  'guides/coming-from',
  'guides/failure-handling',
  'guides/timeouts-and-zombies',
  'guides/handling-overload',
  'guides/threads',
  'guides/rate-limits',
  'guides/key-groups',
  'guides/request-and-cancel',
  'guides/boundaries',
  'guides/shutdown-and-restarts',
  'guides/exactly-once-effects',
  'guides/durability',
  'guides/scale-out',
  'guides/observability',
  'guides/dashboard',
  'guides/tuning-worker-counts',
  'guides/autoscaling',
  'architecture',
  'design/message-lifecycle',
  'design/hot-path',
  'design/timing-wheel',
  'design/backpressure',
  'design/watchdog',
  'design/scale-out',
]

// The members of `Loop` by topic (its source is the one front of the loop, kept under the size limit:
// the groups live here). A member not listed stays in typedoc's own Methods / Accessors groups.
const LOOP_MEMBERS = {
  Handlers: ['on', 'route', 'use', 'stamp'],
  Posting: ['post', 'tryPost', 'send', 'request', 'cancel', 'postDelayed', 'postAt', 'desiredSize', 'ready'],
  Lifecycle: ['state', 'start', 'pause', 'resume', 'flushed', 'drain', 'stop', 'resize'],
  Restore: ['restore'],
  Inspection: ['metrics', 'trace', 'circuits', 'zombies', 'queued', 'running'],
  'Dead letters': ['deadLetters', 'replay'],
  Events: ['events'],
}

/**
 * Adds a `@group` tag to each listed member of a class, on the comment typedoc groups by.
 * @param {import('typedoc').DeclarationReflection} owner
 * @param {Record<string, string[]>} groups
 */
function groupMembers(owner, groups) {
  for (const [group, names] of Object.entries(groups)) {
    for (const name of names) {
      const member = owner.getChildByName(name)
      if (member === undefined || !member.isDeclaration()) continue
      const target = member.signatures?.[0] ?? member.getSignature ?? member
      target.comment ??= new Comment()
      target.comment.blockTags.push(new CommentTag('@group', [{ kind: 'text', text: group }]))
    }
  }
}

/**
 * A short title from a document's first heading, which also names its page: the part before the
 * colon (`Failure handling: retries, …` → `Failure handling`), or after a `Design note:` prefix.
 * @param {string} heading
 */
function title(heading) {
  const plain = heading.replaceAll('`', '').trim()
  const design = /^Design(?: note)?:\s*(.+)$/.exec(plain)
  if (design) return design[1].charAt(0).toUpperCase() + design[1].slice(1)
  return plain.split(':')[0].trim()
}

/**
 * A README's content without its leading `# Title` line (which may hold code spans).
 * @param {import('typedoc').CommentDisplayPart[]} parts
 * @returns {import('typedoc').CommentDisplayPart[]}
 */
export function withoutTitle(parts) {
  const first = parts[0]
  if (first?.kind !== 'text' || !/^#[ \t]/.test(first.text)) return parts
  for (const [i, part] of parts.entries()) {
    const end = part.kind === 'text' ? part.text.indexOf('\n') : -1
    if (end === -1) continue
    const rest = part.text.slice(end).replace(/^\s+/, '')
    return [...(rest === '' ? [] : [{ ...part, text: rest }]), ...parts.slice(i + 1)]
  }
  return []
}

/**
 * A markdown-it rule: gives each code span of a heading a text child holding its code, so typedoc's
 * heading renderer — which reads only text tokens for the anchor and the page's table of contents —
 * sees it. The code span still renders as `<code>` (its renderer reads `content`, not children).
 * @param {import('markdown-it').StateCore} state
 */
function headingCodeText(state) {
  for (const [i, token] of state.tokens.entries()) {
    if (token.type !== 'heading_open') continue
    for (const child of state.tokens[i + 1]?.children ?? []) {
      if (child.type !== 'code_inline' || child.children !== null) continue
      const text = new state.Token('text', '', 0)
      text.content = child.content
      child.children = [text]
    }
  }
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  // Options are reset after plugins load: set the loader once they are read.
  app.on(Application.EVENT_BOOTSTRAP_END, () => {
    app.options.setValue('markdownItLoader', (parser) => parser.core.ruler.push('heading_code_text', headingCodeText))
  })
  // Where each document came from ('guides/coming-from'), before its name becomes its title.
  const origin = new Map()

  app.converter.on(Converter.EVENT_CREATE_DOCUMENT, (_context, document) => {
    origin.set(document, document.name)
    // The first line, code spans included (`# Getting started with \`@flowing/core\``).
    const text = document.content.map((part) => part.text).join('')
    const heading = /^#\s+(.+)$/m.exec(text)
    if (heading) document.name = title(heading[1])
    if (document.frontmatter.group === undefined) {
      document.frontmatter.group = origin.get(document).startsWith('guides/') ? 'Guides' : 'Design notes'
    }
  })

  app.converter.on(
    Converter.EVENT_RESOLVE_BEGIN,
    (context) => {
      const project = context.project
      for (const module of project.getChildrenByKind(ReflectionKind.Module)) {
        const name = module.name.replace(/^@flowing\//, '')
        const file = normalizePath(join(root, 'packages', name, 'README.md'))
        if (!existsSync(file)) continue
        const { content } = app.converter.parseRawComment(
          new MinimalSourceFile(readFileSync(file, 'utf8'), file),
          project.files,
        )
        module.readme = withoutTitle(content)
        project.files.registerReflectionPath(file, module)
      }
      const loop = project.getChildByName(['@flowing/core', 'Loop'])
      if (loop?.isDeclaration()) groupMembers(loop, LOOP_MEMBERS)
      const rank = (child) => {
        const at = ORDER.indexOf(origin.get(child) ?? '')
        return at === -1 ? ORDER.length : at
      }
      project.documents?.sort((a, b) => rank(a) - rank(b))
      project.childrenIncludingDocuments?.sort((a, b) => rank(a) - rank(b))
    },
    // Before typedoc resolves links, groups and sorts.
    100,
  )
  app.converter.on(
    Converter.EVENT_RESOLVE_BEGIN,
    (context) => {
      const project = context.project
      if (project.readme !== undefined) project.readme = withoutTitle(project.readme)
    },
    // After typedoc's package plugin has read README.md into the project.
    -100,
  )
}
