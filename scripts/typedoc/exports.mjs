// A typedoc plugin: the `notExported` validation across the workspace's packages.
//
// typedoc's own check skips every type whose package is not the project's (`flowing-monorepo`, the
// root package.json), so with one program over eleven `@flowing/*` packages it checks nothing: a
// public signature could name a type no index exports (a user cannot import it, the docs cannot link
// it) and the build stayed green. This one warns — an error under `treatValidationWarningsAsErrors`
// — for every type of a `@flowing/*` package that a documented signature, property, type parameter,
// `extends` or `implements` clause refers to but no entry point exports. Types hidden on purpose
// (`@internal`, private) are left out, as typedoc does.
import { Application, makeRecursiveVisitor } from 'typedoc'

/**
 * Every reference type the documentation shows, with the reflection that shows it.
 * @param {import('typedoc').ProjectReflection} project
 * @returns {{ type: import('typedoc').ReferenceType, owner: import('typedoc').Reflection }[]}
 */
export function referenceTypes(project) {
  const found = []
  for (const owner of Object.values(project.reflections)) {
    const visitor = makeRecursiveVisitor({ reference: (type) => void found.push({ type, owner }) })
    const types = [owner.type, owner.default, ...(owner.extendedTypes ?? []), ...(owner.implementedTypes ?? [])]
    for (const type of types) type?.visit(visitor)
  }
  return found
}

/**
 * The references to a workspace package's type that no entry point exports: one line each, first
 * referrer named.
 * @param {import('typedoc').ProjectReflection} project
 * @returns {string[]}
 */
export function unexportedReferences(project) {
  const seen = new Map()
  for (const { type, owner } of referenceTypes(project)) {
    const id = type.symbolId
    if (type.reflection !== undefined || type.externalUrl !== undefined || type.isIntentionallyBroken()) continue
    if (id === undefined || !id.packageName.startsWith('@flowing/') || project.symbolIdHasBeenRemoved(id)) continue
    const key = id.getStableKey()
    if (seen.has(key)) continue
    seen.set(
      key,
      `${type.qualifiedName} (${id.packageName}/${id.packagePath}) is referenced by ${owner.getFriendlyFullName()} but not exported by ${id.packageName}`,
    )
  }
  return [...seen.values()].sort()
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.on(Application.EVENT_VALIDATE_PROJECT, (project) => {
    if (!app.options.getValue('validation').notExported) return
    for (const line of unexportedReferences(project)) app.logger.validationWarning(line)
  })
}
