import { spawn } from 'node:child_process'
import { ROOT } from '../helpers/cli.ts'

/** What `ota build` printed: the version and each installer. */
export interface BuiltRelease {
  version: string
  installers: { filename: string; sha256: string; size_bytes: number }[]
}

/**
 * Runs `ota build --version VERSION --out OUT` as an operator would (about 15 s: esbuild, the native
 * dependencies, dpkg-deb and tar), the release key's public half taken from OTA_SIGNING_KEY.
 */
export function otaBuild(
  version: string,
  outDir: string,
  signingKeyFile: string,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'ota/cli.ts', 'build', '--version', version, '--out', outDir],
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
