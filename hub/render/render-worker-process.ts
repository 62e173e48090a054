import { createRequire } from 'node:module'
import { followsPolicy } from './ghostscript-policy.ts'
import type { RenderCommand, WorkerReport } from './worker-messages.ts'

// The render worker: a child process of the hub that runs Ghostscript in-process through ghostscript4js,
// one render at a time. It is its own process so that the hub can kill it at a render's deadline (a call
// into libgs cannot be interrupted) and so that the hub's event loop never waits on Ghostscript. Started by
// RenderWorker (render-worker.ts) with the GS_* variables already removed from its environment.

interface Ghostscript4js {
  /** Runs Ghostscript with argv (argv[0] = "gs") on libuv's thread pool; rejects with its error code. */
  execute(argv: string[]): Promise<void>
}

// ghostscript4js is CommonJS without TypeScript types.
const ghostscript = createRequire(import.meta.url)('ghostscript4js') as Ghostscript4js

function report(message: WorkerReport): void {
  process.send?.(message)
}

let queue = Promise.resolve()

process.on('message', (command: RenderCommand) => {
  if (command.type !== 'render') return
  // ghostscript4js serialises calls with a global lock anyway; keep the order explicit.
  queue = queue.then(async () => {
    try {
      if (!followsPolicy(command.args)) throw new Error("arguments without the hub's Ghostscript policy")
      await ghostscript.execute(command.args)
      report({ type: 'done', id: command.id })
    } catch (error) {
      report({
        type: 'failed',
        id: command.id,
        error: error instanceof Error ? error.message : String(error),
      })
    }
  })
})

// The hub went away (or closed the channel to stop the worker): nothing is left to render for.
process.on('disconnect', () => process.exit(0))

report({ type: 'ready' })
