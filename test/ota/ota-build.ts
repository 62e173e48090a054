import { spawn } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { cacheDir } from '../../ota/runtime.ts'
import { ROOT } from '../helpers/cli.ts'

/** What `ota build` printed: the version and each installer. */
export interface BuiltRelease {
  version: string
  installers: { filename: string; sha256: string; size_bytes: number }[]
}

/**
 * Runs `ota build --version VERSION --out OUT [--arch A,B]` as an operator would (about 15 s an architecture
 * once its native addons are in the cache, about 1 min more each the first time: ota/addons.ts), the release
 * key's public half taken from OTA_SIGNING_KEY.
 *
 * One build at a time on this machine (flock on a file in the OTA cache): each build keeps a core busy, and on a
 * fresh machine test files in parallel workers would each fetch the same runtime and compile the same addons
 * (which is safe, ota/cache-entry.ts, but twice the work).
 */
export function otaBuild(
  version: string,
  outDir: string,
  signingKeyFile: string,
  architectures: readonly string[] = [],
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const cache = cacheDir()
  mkdirSync(cache, { recursive: true })
  return new Promise((resolve) => {
    const child = spawn(
      'flock',
      [
        '--exclusive',
        path.join(cache, '.test-build.lock'),
        process.execPath,
        '--import',
        'tsx',
        'ota/cli.ts',
        'build',
        '--version',
        version,
        '--out',
        outDir,
        ...(architectures.length > 0 ? ['--arch', architectures.join(',')] : []),
      ],
      {
        cwd: ROOT,
        env: { ...process.env, OTA_SIGNING_KEY: signingKeyFile },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => {
      stdout += c
    })
    child.stderr.on('data', (c: Buffer) => {
      stderr += c
    })
    child.on('exit', (status) => resolve({ status, stdout, stderr }))
  })
}
