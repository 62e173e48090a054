import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { createPdfInspector, type WarmPdfInspector } from '../../../print-api/documents/pdf-inspection.ts'

type InspectorOptions = Parameters<typeof createPdfInspector>[0]

/**
 * A test file's PDF inspectors (real gs) and its directory of documents: each inspector made is closed after
 * its test, the directory removed after the file. Hooks registered after this one run before its own.
 */
export function inspectorRig(prefix: string, defaults: InspectorOptions) {
  let dir = ''
  const made: WarmPdfInspector[] = []
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix))
  })
  afterEach(() => {
    for (const inspector of made.splice(0)) inspector.close()
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })
  return {
    get dir(): string {
      return dir
    },
    inspector(options: Partial<InspectorOptions> = {}): WarmPdfInspector {
      const inspector = createPdfInspector({ ...defaults, ...options })
      made.push(inspector)
      return inspector
    },
    /** `bytes` written to `name` in the directory; its path. */
    async file(name: string, bytes: Buffer): Promise<string> {
      const path = join(dir, name)
      await writeFile(path, bytes)
      return path
    },
  }
}
