import { spawn } from 'node:child_process'

/**
 * `promtool check metrics` on an exposition text: its exit code and what it printed (the lint problems). A
 * missing promtool is an error, not a skip: scripts/setup.sh installs it (Debian's `prometheus` package).
 */
export function promtoolCheck(text: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk))
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new Error('promtool is not installed: apt-get install prometheus (scripts/setup.sh installs it)')
          : error,
      ),
    )
    child.on('close', (code) => resolve({ code, output }))
    child.stdin.end(text)
  })
}
