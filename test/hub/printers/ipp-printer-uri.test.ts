import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import {
  ippPrinterUriOf,
  isIppPrinter,
  isIppUri,
  parseIppPrinterUri,
  UNDESCRIBED_IPP_CAPABILITIES,
} from '../../../hub/printers/ipp-printer-uri.ts'
import { parsePrinterUri } from '../../../hub/printers/printer-uri.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

const dir = tempDir('print-hub-ipp-uri-test-')
afterAll(() => dir.remove())

describe('IPP printer URIs', () => {
  it('takes ipp:// and ipps:// URIs, keyed by the printer URI without the hub’s options', () => {
    expect(isIppUri('ipp://printer.local/ipp/print')).toBe(true)
    expect(isIppUri('socket://10.0.0.5?language=zpl')).toBe(false)
    const spec = parseIppPrinterUri('ipp://10.0.0.7/ipp/print?name=Back%20office')
    expect(spec).toEqual({
      key: 'ipp://10.0.0.7/ipp/print',
      name: 'Back office',
      ipp: { uri: 'ipp://10.0.0.7/ipp/print', ca: null, caFile: null },
      capabilities: UNDESCRIBED_IPP_CAPABILITIES,
    })
    expect(isIppPrinter(spec)).toBe(true)
    expect(isIppPrinter(parsePrinterUri('socket://10.0.0.5?language=zpl'))).toBe(false)
    expect(parseIppPrinterUri('ipp://10.0.0.7:8631').name).toBe('IPP printer at ipp://10.0.0.7:8631/')
  })

  it('reads the certificate an ipps:// printer must chain to, and round-trips the URI', () => {
    const caFile = path.join(dir.path, 'printer.pem')
    writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\n')
    const uri = `ipps://printer.local/ipp/print?name=Office&ca_file=${encodeURIComponent(caFile)}`
    const spec = parseIppPrinterUri(uri)
    expect(spec.ipp.ca?.toString()).toBe('-----BEGIN CERTIFICATE-----\n')
    expect(ippPrinterUriOf(spec)).toBe(uri)
    expect(ippPrinterUriOf(parseIppPrinterUri('ipp://10.0.0.7/ipp/print'))).toBe('ipp://10.0.0.7/ipp/print')
  })

  it.each([
    ['ipp://10.0.0.7/ipp/print?language=zpl', /unknown option "language"/],
    ['ipp://10.0.0.7/?name=a&name=b', /given twice/],
    ['ipp://user:secret@10.0.0.7/', /user name or password/],
    ['ipp://10.0.0.7/?ca_file=/etc/hosts', /ca_file= is for ipps/],
    ['ipps://10.0.0.7/?ca_file=/nonexistent.pem', /cannot be read \(ENOENT\)/],
    ['ipp://10.0.0.7/?name=', /name= is empty/],
  ])('refuses %s', (uri, problem) => {
    expect(() => parseIppPrinterUri(uri)).toThrow(problem)
  })
})
