/**
 * The methods each route path answers, for a 405 on a known path with another method (RFC 9110 §15.5.6: a
 * 405 carries `Allow`). Paths are Fastify patterns whose parameters are whole segments (`:printJobId`).
 */
export class AllowedMethods {
  readonly #routes: { pattern: RegExp; method: string }[] = []

  add(method: string, url: string): void {
    const segments = url
      .split('/')
      .map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    this.#routes.push({ pattern: new RegExp(`^${segments.join('/')}/?$`), method: method.toUpperCase() })
  }

  /** The methods `path` answers, sorted; empty for a path no route has. */
  for(path: string): string[] {
    const methods = new Set(this.#routes.filter((r) => r.pattern.test(path)).map((r) => r.method))
    return [...methods].sort()
  }
}
