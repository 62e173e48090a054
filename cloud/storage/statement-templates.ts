import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely'
import type { Database } from './schema.ts'

/** A value a template leaves open, taken from each run's arguments. */
class Slot<A> {
  constructor(readonly of: (args: A) => unknown) {}
}

/** Marks a value of the statement as one each run fills in: `slot((args) => args.items[2].id)`. */
export type SlotOf<A> = <V>(of: (args: A) => V) => V

/**
 * A slot for each value of a list the arguments hold, as long as the first run's (an `IN (…)` over a padded
 * list, whose length is in the key): `slotsOf(slot, ids, (args) => args.ids)`.
 */
export function slotsOf<A, T>(slot: SlotOf<A>, first: readonly T[], list: (args: A) => readonly T[]): T[] {
  return first.map((_, i) => slot((args) => list(args)[i] as T))
}

/**
 * Statements whose text depends only on a key (their shape: which rule, which fields, how many rows), built
 * and compiled by Kysely once per key, then run with each call's own values. Building and compiling a
 * batch's statement (a `CASE` arm per job and field) cost more of a node's CPU than sending it
 * (docs/performance.md, "CPU per job on the cluster"); a template's text is also the same string each run,
 * so the prepared statement's name (postgres-prepared.ts) is found without hashing it again.
 *
 * `build` sees the first run's arguments to learn the shape, and must take every value that may differ
 * between runs of one key through `slot`: a value it uses directly is fixed in the template. The keys a
 * caller makes must be finitely many (a template is kept for each).
 */
export function statementTemplates<A, R>(
  build: (args: A, slot: SlotOf<A>) => Compilable<R>,
): (db: Kysely<Database>, key: string, args: A) => Promise<QueryResult<R>> {
  const templates = new Map<string, CompiledQuery<R>>()
  const slot = (<V>(of: (args: A) => V) => new Slot(of) as V) as SlotOf<A>
  return (db, key, args) => {
    let template = templates.get(key)
    if (template === undefined) {
      template = build(args, slot).compile()
      templates.set(key, template)
    }
    const parameters = template.parameters.map((value) => (value instanceof Slot ? value.of(args) : value))
    return db.executeQuery({ ...template, parameters })
  }
}
