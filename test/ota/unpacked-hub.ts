import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { FAST_HUB_ENV } from '../e2e/harness.ts'
import { waitForLogLine } from '../helpers/cli.ts'

/**
 * The hub of a package unpacked under `root` (dpkg-deb -x), started through its launcher with the runtime,
 * bundle and node_modules it carries (no tsx, no repository in reach), enrolled with `enroll` and given one
 * printer; resolves once it logs "hub ready". The caller stops it.
 */
export async function startUnpackedHub(
  root: string,
  options: { cloudUrl: string; dataDir: string; enroll: string; printer: string },
): Promise<ChildProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...FAST_HUB_ENV }
  delete env.NODE_OPTIONS
  const { cloudUrl, dataDir, enroll, printer } = options
  const hub = spawn(
    path.join(root, 'opt/print-hub/bin/print-hub'),
    ['run', '--cloud', cloudUrl, '--data', dataDir, '--enroll', enroll, '--printer', printer],
    { cwd: dataDir, env, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  hub.stderr?.resume()
  await waitForLogLine(hub, (line) => line.msg === 'hub ready')
  return hub
}
