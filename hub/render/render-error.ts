/** Why a render failed; the job layer reports every one as `render_failed` with this reason. */
export type RenderFailureReason =
  /** The file is not a PDF (no `%PDF-` header in its first 1024 bytes, or PostScript). */
  | 'not_a_pdf'
  /** Ghostscript stopped with an error (broken or unsupported PDF). */
  | 'ghostscript_error'
  /** The document has no page to print. */
  | 'no_pages'
  /** A page is larger than the bound (`maxPageDots`) at the dpi asked. */
  | 'page_too_big'
  /** Ghostscript did not finish within the render's deadline. */
  | 'deadline'
  /** The worker process ended during the render (crash, out of memory). */
  | 'worker_crashed'
  /** The worker process could not be started, or was stopped. */
  | 'worker_unavailable'
  /** The options cannot be rendered (a dpi or deadline out of range). */
  | 'bad_options'

/** A render that failed. Only that render: the worker is ready for the next one. */
export class RenderError extends Error {
  readonly code = 'render_failed'

  constructor(
    readonly reason: RenderFailureReason,
    message: string,
  ) {
    super(message)
    this.name = 'RenderError'
  }
}
