import { createServer, type Server } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { available } from '../helpers/debian-root.ts'
import { tempDir } from '../helpers/temp-dir.ts'
import { type PrinterSimulator, startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { makeProofImage, PROOF_MARK, type ProofImage } from './proof-image.ts'
import { type QemuMachine, qemuMissing, startQemuMachine } from './qemu-machine.ts'

// The harness of the appliance boot test (qemu-machine.ts), proven on a throwaway image while the real one
// is being built: Debian 12's arm64 kernel boots a minbase root under qemu-system-aarch64 (TCG), reaches
// the console's login prompt, fetches a page from a server on the host's loopback through a guestfwd, cannot
// reach a host port that is not forwarded, and talks to the printer simulator through QEMU's usb-serial
// adapter (/dev/ttyUSB0 in the guest). `npm run test:appliance` runs it; not part of `npm test`.
//
// Measured on the 2-core x86-64 machine (TCG, -smp 2, -m 1024), 2026-11-28: see docs/appliance-boot-test.md.

const skip =
  qemuMissing() ?? (available('arm64').ok ? null : (available('arm64') as { reason: string }).reason)

describe.skipIf(skip !== null)(
  `the appliance harness on a throwaway arm64 image${skip ? ` (${skip})` : ''}`,
  () => {
    let dir: ReturnType<typeof tempDir>
    let proof: ProofImage
    let machine: QemuMachine | undefined
    let printer: PrinterSimulator
    let web: Server
    let canary: net.Server
    let canaryConnections = 0
    const greeting = `hello from the host ${process.pid}`

    beforeAll(async () => {
      dir = tempDir('appliance-proof-')
      proof = await makeProofImage(dir.path)
      web = createServer((_req, res) =>
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`${greeting}\n`),
      )
      await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve))
      // A host port the guest is not given: nothing may reach it.
      canary = net.createServer((socket) => {
        canaryConnections++
        socket.destroy()
      })
      await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve))
      printer = await startPrinterSimulator({ language: 'escpos' })
    }, 20 * 60_000)

    afterAll(async () => {
      await machine?.close()
      await printer?.close()
      await new Promise((resolve) => web?.close(resolve))
      await new Promise((resolve) => canary?.close(resolve))
      dir?.remove()
    }, 120_000)

    it('boots to a login prompt, reaches only its forward, and has the printer on /dev/ttyUSB0', {
      timeout: 15 * 60_000,
    }, async () => {
      machine = await startQemuMachine({
        image: proof.image,
        kernel: proof.kernel,
        initrd: proof.initrd,
        dir: dir.path,
        forwards: [{ guestPort: 8080, hostPort: (web.address() as AddressInfo).port }],
        usbSerialPort: printer.port,
        append: [`appliance.canary=${(canary.address() as AddressInfo).port}`],
      })
      const proofLine = (what: string) =>
        machine!
          .waitForConsole(new RegExp(`${PROOF_MARK} ${what}: `))
          .then((line) => line.slice(line.indexOf(PROOF_MARK)))
      await machine.waitForConsole(/Run \/init as init process|Freeing unused kernel memory/)
      const kernelMs = machine.uptimeMs()
      await machine.waitForConsole(/ login: /)
      const loginMs = machine.uptimeMs()
      expect(await proofLine('http')).toBe(`${PROOF_MARK} http: ${greeting}`)
      expect(await proofLine('canary')).toBe(`${PROOF_MARK} canary: blocked`)
      expect(canaryConnections).toBe(0)
      expect(await proofLine('tty')).toMatch(/\/dev\/ttyUSB0 root:dialout 660 driver ftdi_sio$/)
      // DLE EOT 1 (ESC/POS printer status) answered by the simulator through the adapter: 0x16, online.
      expect(await proofLine('status')).toBe(`${PROOF_MARK} status: 12`)
      expect((await printer.waitForBytes(21)).toString('latin1')).toBe('hello from the guest\n')
      expect(printer.queries()).toStrictEqual(['DLE EOT 1'])
      const residentKiB = machine.residentKiB()
      console.log(
        JSON.stringify({
          kernel_started_ms: kernelMs,
          login_prompt_ms: loginMs,
          qemu_rss_mib: residentKiB === null ? null : Math.round(residentKiB / 1024),
          image_mib: Math.round(proof.sizeBytes / 2 ** 20),
          install_ms: proof.installMs,
        }),
      )
      const started = Date.now()
      expect(await machine.powerDown()).toBe(true)
      console.log(JSON.stringify({ power_down_ms: Date.now() - started }))
    })
  },
)
