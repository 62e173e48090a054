// The messages between the hub and its render worker process (Node IPC, JSON).

/** Hub → worker: run Ghostscript with `args` (argv[0] included; they must follow ghostscript-policy.ts). */
export interface RenderCommand {
  type: 'render'
  id: number
  args: string[]
}

/** Worker → hub. */
export type WorkerReport =
  /** ghostscript4js is loaded: the worker takes commands. */
  | { type: 'ready' }
  /** Ghostscript finished the render: every page file is complete. */
  | { type: 'done'; id: number }
  /** Ghostscript stopped with an error (ghostscript4js gives only its code; the message went to stderr). */
  | { type: 'failed'; id: number; error: string }
