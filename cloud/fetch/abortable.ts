import type { ApiError } from '../../print-api/api-error.ts'

/**
 * A promise settled by `start` or, first, by `signal`: then `cancel` runs and the promise rejects with the
 * signal's reason. Later settlements are ignored.
 */
export function abortable<T>(
  signal: AbortSignal,
  start: (ok: (value: T) => void, fail: (error: unknown) => void) => void,
  cancel: () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) {
      cancel()
      reject(signal.reason)
      return
    }
    const onAbort = () => {
      cancel()
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
    const settle = () => signal.removeEventListener('abort', onAbort)
    start(
      (value) => {
        settle()
        resolve(value)
      },
      (error) => {
        settle()
        reject(error)
      },
    )
  })
}

export function deadline(ms: number, reason: () => ApiError): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(reason()), ms)
  return { signal: controller.signal, clear: () => clearTimeout(timer) }
}
