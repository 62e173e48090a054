import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { RenderPool } from '../../../hub/render/render-pool.ts'
import { tempDir } from '../../helpers/temp-dir.ts'
import { mm, pagesPdf, withEndlessPage } from './pdf-fixtures.ts'

const dir = tempDir('print-hub-render-pool-test-')
afterAll(() => dir.remove())
const receipt = { width: mm(58), height: mm(40), content: '0 0 0 rg 0 0 72 72 re f' }

function file(name: string, bytes: Buffer): string {
  const filePath = path.join(dir.path, name)
  writeFileSync(filePath, bytes)
  return filePath
}

describe('RenderPool (real Ghostscript)', () => {
  const pool = new RenderPool(2)
  afterAll(() => pool.stop())

  it('renders a PDF on the free worker while the other is stuck on endless content', async () => {
    const endless = pool.render(file('endless.pdf', withEndlessPage([receipt])), {
      dpi: 203,
      deadlineMs: 60_000,
    })
    const stuck = endless[Symbol.asyncIterator]()
    // Page 1 of the endless document comes out; Ghostscript then stays on page 2.
    expect((await stuck.next()).value?.width).toBe(464)
    const pages: number[] = []
    for await (const page of pool.render(file('plain.pdf', pagesPdf([receipt, receipt])), {
      dpi: 203,
      deadlineMs: 20_000,
    }))
      pages.push(page.width)
    expect(pages).toEqual([464, 464])
    expect(pool.pids).toHaveLength(2)
    await stuck.return?.()
  })

  it('starts no process before the first render, and leaves none behind when stopped', async () => {
    const idle = new RenderPool(2)
    expect(idle.pids).toEqual([])
    await idle.stop()
    const pids = pool.pids
    await pool.stop()
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow()
  })
})
