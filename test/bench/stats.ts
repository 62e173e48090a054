/** Latency figures of a sample, in milliseconds (nearest-rank percentiles). */
export interface Summary {
  count: number
  p50: number
  p99: number
  mean: number
  min: number
  max: number
}

export function summarize(samplesMs: number[]): Summary {
  if (samplesMs.length === 0) throw new Error('no samples')
  const sorted = [...samplesMs].sort((a, b) => a - b)
  const rank = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!
  return {
    count: sorted.length,
    p50: rank(0.5),
    p99: rank(0.99),
    mean: sorted.reduce((sum, x) => sum + x, 0) / sorted.length,
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
  }
}

export function median(samples: number[]): number {
  return summarize(samples).p50
}

/** `p50 1.23 ms | p99 4.56 ms | mean ... | max ...` */
export function formatSummary(s: Summary, digits = 2): string {
  const ms = (x: number) => `${x.toFixed(digits)} ms`
  return `p50 ${ms(s.p50)} | p99 ${ms(s.p99)} | mean ${ms(s.mean)} | min ${ms(s.min)} | max ${ms(s.max)} (n = ${s.count})`
}

/** Milliseconds since an arbitrary origin, monotonic. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6
}
