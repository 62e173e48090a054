import { parseArgs } from 'node:util'
import type { PageOf } from '../../protocol/pagination.ts'
import type { Storage } from '../storage/storage.ts'
import { type Environment, NotFoundError, option, RefusedError, UsageError, withStorage } from './common.ts'

/** What an operator can look at and tidy up from the command line (docs/operations.md: operator commands). */

const PAGE = 100

/** Every item of a paged list, page after page. */
async function everything<T>(
  page: (cursor: string | undefined) => Promise<PageOf<T> | undefined>,
): Promise<T[]> {
  const items: T[] = []
  let cursor: string | undefined
  do {
    const next = await page(cursor)
    if (!next) break
    items.push(...next.data)
    cursor = next.next_cursor ?? undefined
  } while (cursor !== undefined)
  return items
}

async function accountOption(args: string[], storage: Storage): Promise<string> {
  const { values } = parseArgs({ args, options: { account: { type: 'string' } } })
  const accountId = option(values, 'account')
  if (!(await storage.accounts.findById(accountId))) throw new NotFoundError(`no account ${accountId}`)
  return accountId
}

function idOption(args: string[]): string {
  const { values } = parseArgs({ args, options: { id: { type: 'string' } } })
  return option(values, 'id')
}

export function accountList(args: string[], env: Environment): Promise<object> {
  parseArgs({ args, options: {} })
  return withStorage(env, async (storage) => ({ accounts: await storage.accounts.listAll() }))
}

export function accountShow(args: string[], env: Environment): Promise<object> {
  const id = idOption(args)
  return withStorage(env, async (storage) => {
    const account = await storage.accounts.findById(id)
    if (!account) throw new NotFoundError(`no account ${id}`)
    return {
      ...account,
      api_clients: (await storage.apiClients.listForAccount(id)).length,
      hubs: (await everything((cursor) => storage.agents.list(id, PAGE, cursor))).length,
      printers: (await everything((cursor) => storage.printers.list(id, PAGE, cursor))).length,
    }
  })
}

export function clientList(args: string[], env: Environment): Promise<object> {
  return withStorage(env, async (storage) => ({
    clients: await storage.apiClients.listForAccount(await accountOption(args, storage)),
  }))
}

export function hubList(args: string[], env: Environment): Promise<object> {
  return withStorage(env, async (storage) => {
    const accountId = await accountOption(args, storage)
    return { hubs: await everything((cursor) => storage.agents.list(accountId, PAGE, cursor)) }
  })
}

export function printerList(args: string[], env: Environment): Promise<object> {
  return withStorage(env, async (storage) => {
    const accountId = await accountOption(args, storage)
    return { printers: await everything((cursor) => storage.printers.list(accountId, PAGE, cursor)) }
  })
}

export function jobList(args: string[], env: Environment): Promise<object> {
  const { values } = parseArgs({ args, options: { account: { type: 'string' }, limit: { type: 'string' } } })
  const accountId = option(values, 'account')
  const limit = values.limit === undefined ? 20 : Number(values.limit)
  if (!(Number.isInteger(limit) && limit >= 1 && limit <= 100))
    throw new UsageError(`--limit must be a whole number from 1 to 100 (got ${JSON.stringify(values.limit)})`)
  return withStorage(env, async (storage) => {
    if (!(await storage.accounts.findById(accountId))) throw new NotFoundError(`no account ${accountId}`)
    return { jobs: (await storage.printJobs.list(accountId, limit, undefined, {}))?.data ?? [] }
  })
}

export function printerRemove(args: string[], env: Environment): Promise<object> {
  const id = idOption(args)
  return withStorage(env, async (storage) => {
    const outcome = await storage.printers.remove(id, new Date().toISOString())
    if (outcome.removed) {
      const { removed: _, ...removed } = outcome
      return removed
    }
    switch (outcome.reason) {
      case 'not_found':
        throw new NotFoundError(`no printer ${id}`)
      case 'online':
        throw new RefusedError(
          `printer ${id} is online: its hub still reports it; take it off the hub (its --printer) first`,
        )
      case 'unfinished_jobs':
        throw new RefusedError(
          `printer ${id} has ${outcome.unfinished_jobs} unfinished print jobs; cancel them or let them expire first`,
        )
    }
  })
}

export function hubShow(args: string[], env: Environment): Promise<object> {
  const id = idOption(args)
  return withStorage(
    env,
    async (storage) => (await storage.agents.findById(id)) ?? throwNotFound(`no hub ${id}`),
  )
}

export function printerShow(args: string[], env: Environment): Promise<object> {
  const id = idOption(args)
  return withStorage(env, async (storage) => {
    const where = await storage.printers.locate(id)
    const printer = where && (await storage.printers.findById(where.account_id, id))
    if (!where || !printer) throw new NotFoundError(`no printer ${id}`)
    return { ...printer, account_id: where.account_id, printer_key: where.printer_key }
  })
}

/** A job of any account with what its hub was told: offered, cancel requested (docs/job-lifecycle.md). */
export function jobShow(args: string[], env: Environment): Promise<object> {
  const id = idOption(args)
  return withStorage(
    env,
    async (storage) => (await storage.printJobs.dispatchable(id)) ?? throwNotFound(`no print job ${id}`),
  )
}

function throwNotFound(message: string): never {
  throw new NotFoundError(message)
}
