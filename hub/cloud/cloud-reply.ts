import type { Static, TSchema } from 'typebox'
import { Compile } from 'typebox/compile'

/** A reply of the cloud checked against its protocol schema: typed when it conforms, null otherwise. */
export function conforming<T extends TSchema>(schema: T): (value: unknown) => Static<T> | null {
  const check = Compile(schema)
  return (value) => (check.Check(value) ? (value as Static<T>) : null)
}
