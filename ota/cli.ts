/**
 * The release builder's CLI (DESIGN: Stable operator interface): `build --version X.Y.Z --out DIR` and
 * `publish --from DIR`. Signed releases and the installer catalog come with a later issue; until then every
 * command is refused with a clear message, and `--help` says so.
 */
const HELP = `usage: ota build --version X.Y.Z --out DIR
       ota publish --from DIR

Builds and publishes releases of the hub. Not built yet: every command is refused (exit 2).

commands (planned):
  build                            build the hub's installers for a version into DIR
                                   → {version, installers: [{filename, sha256, size_bytes}]}
      --version X.Y.Z              the release's version
      --out DIR                    where the installers go
  publish                          add the release in DIR to the catalog of the cloud in DATA_DIR, as current
                                   → {version}
      --from DIR                   a directory written by ota build
  help, --help                     this help

environment:
  DATA_DIR                         the cloud's data directory (publish)
`

const args = process.argv.slice(2)
if (args[0] === 'help' || args.includes('--help') || args.includes('-h')) {
  process.stdout.write(HELP)
} else {
  process.stderr.write('ota: the release builder is not built yet; no command is available (ota --help)\n')
  process.exit(2)
}
