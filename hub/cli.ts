/**
 * The hub agent's CLI (DESIGN: Stable operator interface): `run --cloud URL --data DIR [--enroll TOKEN]`.
 * The agent itself (enrollment, MQTT session, spool, transports) is built by issue 3; until then every
 * command is refused with a clear message rather than pretending to work.
 */
process.stderr.write('hub: the hub agent is not built yet (see issue 3); no command is available\n')
process.exit(2)
