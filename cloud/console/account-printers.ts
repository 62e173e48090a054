import type { Printer } from '../../protocol/printer.ts'
import type { Storage } from '../storage/storage.ts'

/** Every printer of the account, as the API lists them (removed ones are not), read page by page. */
export async function accountPrinters(storage: Storage, accountId: string): Promise<Printer[]> {
  const printers: Printer[] = []
  let cursor: string | undefined
  do {
    const page = await storage.printers.list(accountId, 100, cursor)
    if (!page) break
    printers.push(...page.data)
    cursor = page.next_cursor ?? undefined
  } while (cursor)
  return printers
}
