/**
 * The release builder's CLI (DESIGN: Stable operator interface): `build --version X.Y.Z --out DIR` and
 * `publish --from DIR`. Signed releases and the installer catalog come with a later issue; until then every
 * command is refused with a clear message.
 */
process.stderr.write('ota: the release builder is not built yet; no command is available\n')
process.exit(2)
