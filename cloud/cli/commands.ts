import {
  accountCreate,
  clientCreate,
  clientRevoke,
  enrollmentCreate,
  enrollmentRevoke,
  hubRevoke,
} from './account-commands.ts'
import { appCreate, appInstall, appKeyAdd } from './app-commands.ts'
import { type Command, type Environment, UsageError } from './common.ts'
import { hubLanDisable, hubLanEnable } from './hub-lan-commands.ts'
import {
  accountList,
  accountShow,
  clientList,
  hubList,
  hubShow,
  jobList,
  jobShow,
  printerList,
  printerRemove,
  printerShow,
} from './inspect-commands.ts'
import { mosquittoConfig } from './mosquitto-config.ts'
import { releasePin, releaseStatus, releaseUnpin } from './release-commands.ts'
import { userCreate } from './user-commands.ts'

/** Each command's words → what runs it (its usage and help are in usage.ts). */
const HANDLERS: Record<string, Command> = {
  'account create': accountCreate,
  'account list': accountList,
  'account show': accountShow,
  'client create': clientCreate,
  'client list': clientList,
  'client revoke': clientRevoke,
  'hub list': hubList,
  'hub show': hubShow,
  'hub revoke': hubRevoke,
  'release pin': releasePin,
  'release unpin': releaseUnpin,
  'release status': releaseStatus,
  'printer list': printerList,
  'printer show': printerShow,
  'printer remove': printerRemove,
  'job list': jobList,
  'job show': jobShow,
  'enrollment create': enrollmentCreate,
  'enrollment revoke': enrollmentRevoke,
  'app create': appCreate,
  'app install': appInstall,
  'user create': userCreate,
}

/**
 * Every command of the cloud CLI but `serve` and help: `argv` as typed after `cloud` → the object the CLI
 * prints as JSON. Settings come from `env` (the CLI gives its process's), so a test sets up accounts, clients
 * and enrollments through the very code an operator runs, without a process of its own: the database is
 * opened, used and closed as the CLI does, whether or not a cloud runs on it.
 */
export async function runCommand(argv: string[], env: Environment): Promise<object> {
  const [command, sub, ...rest] = argv
  if (command === 'mosquitto-config') return mosquittoConfig(argv.slice(1), env)
  // Three words: `app key add`, `hub lan enable|disable`.
  if (command === 'app' && sub === 'key' && rest[0] === 'add') return appKeyAdd(rest.slice(1), env)
  if (command === 'hub' && sub === 'lan') {
    const lan = rest[0] === 'enable' ? hubLanEnable : rest[0] === 'disable' ? hubLanDisable : undefined
    if (lan) return lan(rest.slice(1), env)
  }
  const run = HANDLERS[`${command} ${sub}`]
  if (!run)
    throw new UsageError(command === undefined ? 'no command given' : `unknown command: ${argv.join(' ')}`)
  return run(rest, env)
}
