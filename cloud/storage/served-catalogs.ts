import type { Sql } from './engine.ts'

/** The newest release catalog this cloud has served for a release key (docs/hub-updates.md). */
export interface ServedCatalogRecord {
  serial: number
  /** SHA-256 of the catalog's text, hex. */
  sha256: string
}

export interface ServedCatalogRepository {
  /**
   * Records that the catalog `served` of release key `keyId` is about to be served, unless one with a
   * higher serial was; answers the record as it stands then (the highest, by whichever node).
   */
  recordServed(keyId: string, served: ServedCatalogRecord): Promise<ServedCatalogRecord>
  /** The record of `keyId`; undefined before its first catalog with a serial was served. */
  highest(keyId: string): Promise<ServedCatalogRecord | undefined>
}

export function createServedCatalogRepository({ db }: Sql): ServedCatalogRepository {
  const highest = async (keyId: string) => {
    const row = await db
      .selectFrom('served_catalogs')
      .select(['serial', 'sha256'])
      .where('key_id', '=', keyId)
      .executeTakeFirst()
    return row && { serial: row.serial, sha256: row.sha256 }
  }
  return {
    highest,
    async recordServed(keyId, { serial, sha256 }) {
      const served_at = new Date().toISOString()
      await db
        .insertInto('served_catalogs')
        .values({ key_id: keyId, serial, sha256, served_at })
        .onConflict((conflict) =>
          conflict
            .column('key_id')
            .doUpdateSet({ serial, sha256, served_at })
            .where('served_catalogs.serial', '<', serial),
        )
        .execute()
      const record = await highest(keyId)
      if (!record) throw new Error('the served catalog was not recorded')
      return record
    },
  }
}
