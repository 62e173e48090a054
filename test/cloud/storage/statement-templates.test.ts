import { describe, expect, it } from 'vitest'
import { type SlotOf, statementTemplates } from '../../../cloud/storage/statement-templates.ts'
import { ENGINES, storageForEachTest } from './engines.ts'

/**
 * A statement built and compiled once per key, run with each call's own values (statement-templates.ts):
 * the same on both engines.
 */
describe.each(ENGINES)('statement templates on %s', (engine) => {
  const t = storageForEachTest(engine)

  const threeAccounts = async () => {
    const { storage } = t
    return Promise.all(['Alpha', 'Bravo', 'Charlie'].map((name) => storage.accounts.create(name)))
  }

  /** Names of the accounts of these ids, by a template per number of ids; counts its builds. */
  const namesOf = () => {
    let builds = 0
    const run = statementTemplates((ids: readonly string[], slot: SlotOf<readonly string[]>) => {
      builds += 1
      return t.db
        .selectFrom('accounts')
        .select('name')
        .where(
          'account_id',
          'in',
          ids.map((_, i) => slot((all) => all[i] ?? '')),
        )
        .orderBy('name')
    })
    return {
      names: async (ids: readonly string[]) =>
        (await run(t.db, `${ids.length}`, ids)).rows.map((row) => row.name),
      builds: () => builds,
    }
  }

  it('builds a key’s statement once and runs it with each call’s values', async () => {
    const [alpha, bravo, charlie] = await threeAccounts()
    const query = namesOf()
    expect(await query.names([alpha!.account_id, bravo!.account_id])).toEqual(['Alpha', 'Bravo'])
    expect(await query.names([bravo!.account_id, charlie!.account_id])).toEqual(['Bravo', 'Charlie'])
    expect(query.builds()).toBe(1)
    expect(await query.names([charlie!.account_id])).toEqual(['Charlie'])
    expect(query.builds()).toBe(2)
  })

  it('runs a template inside a transaction, seeing its uncommitted rows', async () => {
    const [alpha] = await threeAccounts()
    const query = namesOf()
    await t.db.transaction().execute(async (tx) => {
      await tx
        .updateTable('accounts')
        .set({ name: 'Renamed' })
        .where('account_id', '=', alpha!.account_id)
        .execute()
      const run = statementTemplates((_: readonly string[], slot: SlotOf<readonly string[]>) =>
        t.db
          .selectFrom('accounts')
          .select('name')
          .where(
            'account_id',
            '=',
            slot((all) => all[0] ?? ''),
          ),
      )
      expect((await run(tx, 'one', [alpha!.account_id])).rows).toEqual([{ name: 'Renamed' }])
    })
    expect(await query.names([alpha!.account_id])).toEqual(['Renamed'])
  })

  it('keeps in the template a value the build used without a slot', async () => {
    const [alpha, bravo] = await threeAccounts()
    const run = statementTemplates((ids: readonly string[]) =>
      t.db
        .selectFrom('accounts')
        .select('name')
        .where('account_id', '=', ids[0] ?? ''),
    )
    expect((await run(t.db, 'one', [alpha!.account_id])).rows).toEqual([{ name: 'Alpha' }])
    expect((await run(t.db, 'one', [bravo!.account_id])).rows).toEqual([{ name: 'Alpha' }])
  })
})
