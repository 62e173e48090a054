// Stands in for the module typed-client.test.ts generates from the served /openapi.json (with
// openapi-typescript) and type-checks backend.ts against; the project's own `tsc --noEmit` runs before any
// test, so it sees this untyped stand-in instead.
declare module 'print-hub-openapi' {
  // biome-ignore lint/suspicious/noExplicitAny: untyped on purpose; the test checks against the real types
  export type paths = any
  // biome-ignore lint/suspicious/noExplicitAny: as above
  export type components = any
}
