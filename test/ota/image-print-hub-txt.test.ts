import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { isIppUri, parseIppPrinterUri } from '../../hub/printers/ipp-printer-uri.ts'
import { parsePrinterUri } from '../../hub/printers/printer-uri.ts'
import { CLOUD_URL } from '../../ota/image-root.ts'
import { ROOT } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp-dir.ts'

/**
 * The first-boot scripts that read the boot partition (packaging/appliance), run by /bin/sh as on the
 * appliance, with BOOT and ROOT pointing at temporary directories.
 */
const script = (name: string) => path.join(ROOT, 'packaging/appliance', name)

describe('the boot partition scripts', () => {
  const dirs: { remove(): void }[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.remove()
  })

  function card(files: Record<string, string | Buffer>) {
    const dir = tempDir('appliance-card-')
    dirs.push(dir)
    const boot = path.join(dir.path, 'boot')
    const root = path.join(dir.path, 'root')
    mkdirSync(boot)
    mkdirSync(path.join(root, 'etc/default'), { recursive: true })
    writeFileSync(
      path.join(root, 'etc/default/print-hub'),
      readFileSync(path.join(ROOT, 'packaging/print-hub.default')),
    )
    writeFileSync(
      path.join(root, 'etc/default/print-hub'),
      readFileSync(path.join(root, 'etc/default/print-hub'), 'utf8').replace(
        /^PRINT_HUB_CLOUD=$/m,
        'PRINT_HUB_CLOUD=https://built-in.example.com',
      ),
    )
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(boot, name), text)
    const read = (inside: string) => readFileSync(path.join(root, inside), 'utf8')
    const run = (name: string) =>
      spawnSync('/bin/sh', [script(name)], {
        env: { PATH: process.env.PATH, BOOT: boot, ROOT: root },
        encoding: 'utf8',
      })
    const setting = (name: string) =>
      read('etc/default/print-hub').match(new RegExp(`^${name}=(.*)$`, 'm'))?.[1]
    return { boot, root, read, run, setting, onBoot: (name: string) => path.join(boot, name) }
  }

  it('overrides the cloud, sets the enrollment token and writes the Wi-Fi network from a Windows-saved file', () => {
    const c = card({
      'print-hub.txt':
        '\ufeff# From the installer\r\nCLOUD_URL = https://print.example.com:8443/\r\n\r\nWIFI_SSID=Shop "Front" é\r\n' +
        'WIFI_PASSPHRASE="  pa#ss w"ord  "\r\nWIFI_COUNTRY=de\r\nENROLL_TOKEN=enr_abc.DEF-123',
    })
    const result = c.run('apply-print-hub-txt.sh')
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    expect(c.setting('PRINT_HUB_CLOUD')).toBe('https://print.example.com:8443/')
    expect(c.setting('PRINT_HUB_OPTIONS')).toBe('--enroll enr_abc.DEF-123')
    const wpa = c.read('etc/wpa_supplicant/wpa_supplicant-wlan0.conf')
    expect(wpa).toContain('country=DE\n')
    expect(wpa).toContain(`ssid=${Buffer.from('Shop "Front" é').toString('hex')}\n`)
    expect(wpa).toContain('psk="  pa#ss w"ord  "\n')
    // Consumed: the secrets do not stay on the card.
    expect(existsSync(c.onBoot('print-hub.txt'))).toBe(false)
    const applied = readFileSync(c.onBoot('print-hub.txt.applied'), 'utf8')
    expect(applied).toContain('WIFI_PASSPHRASE=(applied)')
    expect(applied).toContain('ENROLL_TOKEN=(applied)')
    expect(applied).not.toContain('pa#ss')
    expect(applied).not.toContain('enr_abc')
  })

  it('keeps the built-in cloud and pairing mode when the file only names a Wi-Fi network', () => {
    const c = card({ 'print-hub.txt': 'WIFI_SSID=Guest\nWIFI_PASSPHRASE=\n' })
    expect(c.run('apply-print-hub-txt.sh').status).toBe(0)
    expect(c.setting('PRINT_HUB_CLOUD')).toBe('https://built-in.example.com')
    expect(c.setting('PRINT_HUB_OPTIONS')).toBe('')
    expect(c.read('etc/wpa_supplicant/wpa_supplicant-wlan0.conf')).toContain('key_mgmt=NONE')
  })

  it('adds each PRINTER as a --printer option beside the token; a later file with printers replaces them, keeping the token', () => {
    const c = card({
      'print-hub.txt':
        'ENROLL_TOKEN=enr_1\nPRINTER=serial:/dev/ttyUSB0?language=escpos&baud=19200\n' +
        'PRINTER = socket://10.0.0.5:9100?language=zpl&dpi=203&name=Labels\n',
    })
    const first = c.run('apply-print-hub-txt.sh')
    expect(first.stderr).toBe('')
    expect(c.setting('PRINT_HUB_OPTIONS')).toBe(
      '--enroll enr_1 --printer serial:/dev/ttyUSB0?language=escpos&baud=19200 ' +
        '--printer socket://10.0.0.5:9100?language=zpl&dpi=203&name=Labels',
    )
    expect(first.stdout).toContain('(printers: --printer serial:/dev/ttyUSB0')
    expect(readFileSync(c.onBoot('print-hub.txt.applied'), 'utf8')).toContain('PRINTER = socket://10.0.0.5')

    writeFileSync(c.onBoot('print-hub.txt'), 'PRINTER=usblp:/dev/usb/lp1?language=tspl\n')
    expect(c.run('apply-print-hub-txt.sh').status).toBe(0)
    expect(c.setting('PRINT_HUB_OPTIONS')).toBe('--enroll enr_1 --printer usblp:/dev/usb/lp1?language=tspl')
    // Every form the file lets through is one `print-hub run --printer` takes.
    for (const uri of [
      'serial:/dev/ttyUSB0?language=escpos&baud=19200',
      'socket://10.0.0.5:9100?language=zpl&dpi=203&name=Labels',
      'usblp:/dev/usb/lp1?language=tspl',
      'usb://04b8:0202',
      'ipp://10.0.0.9:631/ipp/print',
    ])
      expect(() => (isIppUri(uri) ? parseIppPrinterUri(uri) : parsePrinterUri(uri)), uri).not.toThrow()
  })

  it.each([
    ['a printer with a blank', 'PRINTER=serial:/dev/ttyUSB0 --enroll x', /PRINTER must be/],
    ['a printer that is a path', 'PRINTER=/dev/ttyUSB0', /PRINTER must be/],
    ['shell in a printer', 'PRINTER=socket://10.0.0.5$(reboot)', /PRINTER must be/],
    ['an unknown key', 'CLOUD=https://x.example.com', /unknown setting CLOUD/],
    ['a line without =', 'CLOUD_URL https://x.example.com', /not KEY=VALUE/],
    ['shell in the URL', 'CLOUD_URL=https://x.example.com/$(reboot)', /CLOUD_URL must be/],
    ['a URL with a quote', "CLOUD_URL=https://x.example.com/'", /CLOUD_URL must be/],
    ['a token with a space', 'ENROLL_TOKEN=abc --printer socket://evil', /ENROLL_TOKEN/],
    ['a short passphrase', 'WIFI_SSID=Shop\nWIFI_PASSPHRASE=short', /WIFI_PASSPHRASE must be/],
    ['a passphrase without a network', 'WIFI_PASSPHRASE=longenough', /WIFI_SSID is not/],
    ['a 33-byte SSID', `WIFI_SSID=${'x'.repeat(33)}`, /longer than 32 bytes/],
    ['a bad country', 'WIFI_SSID=Shop\nWIFI_COUNTRY=Germany', /two-letter/],
  ])('rejects the whole file for %s, and says why on the card', (_, text, reason) => {
    const c = card({ 'print-hub.txt': `CLOUD_URL=https://other.example.com\n${text}\n` })
    const before = c.read('etc/default/print-hub')
    const result = c.run('apply-print-hub-txt.sh')
    expect(result.status).toBe(1)
    expect(result.stderr).toMatch(reason)
    expect(readFileSync(c.onBoot('print-hub.txt.error'), 'utf8')).toMatch(reason)
    expect(c.read('etc/default/print-hub')).toBe(before)
    expect(existsSync(path.join(c.root, 'etc/wpa_supplicant'))).toBe(false)
    expect(existsSync(c.onBoot('print-hub.txt'))).toBe(true)
  })

  it('takes the same cloud URLs as ota image --cloud', () => {
    for (const url of [
      'https://print.example.com',
      'http://10.0.0.5:3000',
      'https://print.example.com/hub-front/',
      'https://print.example.com?x=1',
      'https://user@print.example.com',
      'ftp://print.example.com',
      'https://print.example.com/a b',
    ]) {
      const c = card({ 'print-hub.txt': `CLOUD_URL=${url}\n` })
      expect(c.run('apply-print-hub-txt.sh').status === 0, url).toBe(CLOUD_URL.test(url))
    }
  })

  it('does nothing without a file', () => {
    const c = card({})
    const before = c.read('etc/default/print-hub')
    expect(c.run('apply-print-hub-txt.sh').status).toBe(0)
    expect(c.read('etc/default/print-hub')).toBe(before)
  })

  it('installs only the public key lines of authorized_keys, once', () => {
    const key =
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl installer@laptop'
    const c = card({
      authorized_keys: `${key}\r\ncommand="/bin/sh" ${key}\n# a comment\nnot a key\n${key}\n`,
    })
    const result = c.run('install-ssh-keys.sh')
    expect(result.status).toBe(0)
    expect(c.read('root/.ssh/authorized_keys')).toBe(`${key}\n`)
    expect(existsSync(c.onBoot('authorized_keys'))).toBe(false)
    expect(existsSync(c.onBoot('authorized_keys.applied'))).toBe(true)
  })
})
