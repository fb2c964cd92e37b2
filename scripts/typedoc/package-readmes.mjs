// A typedoc plugin: each package's module page shows that package's README.md, the way typedoc's
// `packages` entry point strategy would, while the site keeps one program (resolve strategy) and one
// validation pass. Links to `packages/<name>/README.md` anywhere in the docs resolve to that page.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Converter, MinimalSourceFile, normalizePath, ReflectionKind } from 'typedoc'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** @param {import('typedoc').Application} app */
export function load(app) {
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
        module.readme = content
        project.files.registerReflectionPath(file, module)
      }
    },
    // Before the links are resolved.
    100,
  )
}
