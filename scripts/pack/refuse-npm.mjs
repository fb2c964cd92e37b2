// The `prepack` guard of every public package: `npm pack` and `npm publish` keep `workspace:`
// ranges in the tarball, which then fails to install (EUNSUPPORTEDPROTOCOL) while
// `npm publish --dry-run` reports success. pnpm rewrites them; refuse any other packer.
const agent = process.env.npm_config_user_agent ?? ''
if (!agent.startsWith('pnpm/')) {
  console.error(
    `Refusing to pack ${process.env.npm_package_name ?? 'this package'} with ${agent.split(' ')[0] || 'an unknown client'}: ` +
      'only pnpm rewrites the workspace: ranges of its dependencies. Use `pnpm pack` or `pnpm publish -r` (docs/release.md).',
  )
  process.exit(1)
}
