import { statSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RawLanguage } from '../../protocol/enums.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { ApiClient } from './api-client.ts'
import {
  type CloudProcess,
  type HubProcess,
  setUpAccount,
  startCloudProcess,
  startHubProcess,
  stopAll,
} from './harness.ts'

/** One real sample per language (ESC/POS receipt, ZPL/TSPL/CPCL labels), with bytes of every value inside. */
const SAMPLES: Record<RawLanguage, Buffer> = {
  escpos: Buffer.concat([
    Buffer.from([0x1b, 0x40]),
    Buffer.from('Corner Bakery\n2 x Croissant   4.80\n', 'latin1'),
    Buffer.from([0x1d, 0x76, 0x30, 0x00, 0x02, 0x00, 0x02, 0x00, 0xff, 0x10, 0x04, 0x00]),
    Buffer.from([0x1d, 0x56, 0x42, 0x00]),
  ]),
  zpl: Buffer.from('^XA^CI28^FO50,50^A0N,40,40^FDParcel 1 of 2 – Zürich^FS^BCN,80^FD123456789^FS^XZ', 'utf8'),
  tspl: Buffer.from(
    'SIZE 60 mm,40 mm\r\nGAP 2 mm,0\r\nCLS\r\nTEXT 10,10,"3",0,1,1,"SKU-42"\r\nPRINT 1,1\r\n',
    'ascii',
  ),
  cpcl: Buffer.from(
    '! 0 200 200 210 1\r\nTEXT 4 0 30 40 Hello\r\nBARCODE 128 1 1 50 150 10 HORIZ\r\nFORM\r\nPRINT\r\n',
  ),
}

describe('raw jobs, end to end through real processes', () => {
  let cloud: CloudProcess
  let hub: HubProcess
  let api: ApiClient
  const simulators = {} as Record<RawLanguage, PrinterSimulator>
  const printerIds = {} as Record<RawLanguage, string>

  beforeAll(async () => {
    cloud = await startCloudProcess()
    const account = await setUpAccount(cloud)
    api = new ApiClient(cloud.url, account.accessToken)
    for (const language of ['escpos', 'zpl', 'tspl', 'cpcl'] as const) {
      simulators[language] = await startPrinterSimulator({ language })
    }
    hub = await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: (Object.keys(simulators) as RawLanguage[]).map(
        (l) => `${simulators[l].uri}&name=${encodeURIComponent(`Sim ${l}`)}`,
      ),
    })
    const printers = await api.waitForPrinters(4)
    for (const printer of printers) printerIds[printer.languages[0] as RawLanguage] = printer.printer_id
  })
  afterAll(async () => {
    await stopAll()
    for (const simulator of Object.values(simulators)) await simulator?.close()
  })

  it('enrolls the hub and keeps its credential in a 0600 file', () => {
    const mode = statSync(path.join(hub.dataDir, 'identity.json')).mode & 0o777
    expect(mode).toBe(0o600)
  })

  it('lists every printer with its agent, language, capabilities, online state and health', async () => {
    const printers = await api.printers()
    expect(printers).toHaveLength(4)
    for (const printer of printers) {
      expect(printer).toMatchObject({
        agent_id: hub.agentId,
        online: true,
        health: { state: 'ready' },
        capabilities: { document_formats: expect.arrayContaining(['raw']) },
      })
    }
    expect(printers.map((p) => p.name).sort()).toEqual(['Sim cpcl', 'Sim escpos', 'Sim tspl', 'Sim zpl'])
  })

  it.each(['escpos', 'zpl', 'tspl', 'cpcl'] as const)('prints %s byte for byte', async (language) => {
    const simulator = simulators[language]
    simulator.clear()
    const job = await api.printRaw(printerIds[language], SAMPLES[language], language)
    const done = await api.waitForJob(job.print_job_id, ['printed', 'failed'])
    expect(done).toMatchObject({ status: 'printed', failure_reason: null })
    expect(done.reserved_at).not.toBeNull()
    expect(done.started_at).not.toBeNull()
    expect(done.completed_at).not.toBeNull()
    expect(Date.parse(done.reserved_at!)).toBeLessThanOrEqual(Date.parse(done.started_at!))
    expect(Date.parse(done.started_at!)).toBeLessThanOrEqual(Date.parse(done.completed_at!))
    expect(simulator.received().equals(SAMPLES[language])).toBe(true)
  })

  it('repeats the payload for copies', async () => {
    const simulator = simulators.zpl
    simulator.clear()
    const job = await api.printRaw(printerIds.zpl, SAMPLES.zpl, 'zpl', { copies: 3 })
    await api.waitForJob(job.print_job_id, ['printed'])
    expect(simulator.received().equals(Buffer.concat([SAMPLES.zpl, SAMPLES.zpl, SAMPLES.zpl]))).toBe(true)
  })

  it('prints one printer’s jobs one at a time in creation order', async () => {
    const simulator = simulators.tspl
    simulator.clear()
    const payloads = Array.from({ length: 8 }, (_, i) =>
      Buffer.from(`CLS\r\nTEXT 10,10,"3",0,1,1,"job ${i}"\r\nPRINT 1\r\n`),
    )
    const jobs = []
    for (const payload of payloads) jobs.push(await api.printRaw(printerIds.tspl, payload, 'tspl'))
    for (const job of jobs) await api.waitForJob(job.print_job_id, ['printed'])
    expect(simulator.received().toString()).toBe(Buffer.concat(payloads).toString())
  })

  it('keeps printers independent: one waiting for paper does not hold up another', async () => {
    simulators.escpos.clear()
    simulators.cpcl.clear()
    simulators.escpos.setCondition({ paperOut: true })
    const waiting = await api.printRaw(printerIds.escpos, SAMPLES.escpos, 'escpos')
    const other = await api.printRaw(printerIds.cpcl, SAMPLES.cpcl, 'cpcl')
    await api.waitForJob(other.print_job_id, ['printed'])
    expect(simulators.cpcl.received().equals(SAMPLES.cpcl)).toBe(true)
    expect((await api.job(waiting.print_job_id)).status).toBe('reserved')
    expect(simulators.escpos.received().length).toBe(0)
    const printers = await api.printers()
    expect(printers.find((p) => p.printer_id === printerIds.escpos)?.health?.state).toBe('paper_out')
    simulators.escpos.setCondition({ paperOut: false })
    await api.waitForJob(waiting.print_job_id, ['printed'])
    expect(simulators.escpos.received().equals(SAMPLES.escpos)).toBe(true)
  })
})
