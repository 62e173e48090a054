import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../../helpers/temp-dir.ts'
import { startTestCloud, type TestCloud } from '../test-cloud.ts'
import { listen } from './api-helpers.ts'

// The served /openapi.json passes `redocly lint` with the recommended rules: no error and no warning. Redocly
// runs offline here: no config file to fetch, telemetry and the update check off.

const REDOCLY = path.resolve('node_modules/.bin/redocly')

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number }
  problems: { ruleId: string; message: string; location: { pointer?: string }[] }[]
}

let cloud: TestCloud
let dir: ReturnType<typeof tempDir>
let documentFile: string
beforeAll(async () => {
  cloud = await startTestCloud()
  const base = await listen(cloud.app)
  const res = await fetch(`${base}/openapi.json`)
  expect(res.status).toBe(200)
  dir = tempDir('openapi-lint-')
  documentFile = path.join(dir.path, 'openapi.json')
  writeFileSync(documentFile, await res.text())
})
afterAll(async () => {
  await cloud?.close()
  dir?.remove()
})

describe('redocly lint of the served OpenAPI document', () => {
  it('reports no error and no warning with the recommended rules', async () => {
    const { stdout } = await promisify(execFile)(
      REDOCLY,
      ['lint', '--extends=recommended', '--format=json', documentFile],
      {
        cwd: dir.path,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    ).catch((error: { stdout?: string; message: string }) => {
      // A failed lint exits 1 and still prints its report; anything else is not a report.
      if (!error.stdout) throw error
      return { stdout: error.stdout }
    })
    const report = JSON.parse(stdout) as LintReport
    const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)
    expect(problems).toEqual([])
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 })
  })
})
