import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { ApiClient } from '../e2e/api-client.ts'
import { newTempDir, setUpAccount, startCloudProcess, startHubProcess, stopAll } from '../e2e/harness.ts'
import { exitOf, hasExited, ROOT, runCli, waitForLogLine } from '../helpers/cli.ts'
import { startPrinterSimulator } from '../simulators/printer-simulator.ts'
import { PRODUCTION_HUB_ENV } from './hub-env.ts'
import { hubMemory, measureStartUps, printerOnline } from './hub-footprint.ts'
import { median, nowMs } from './stats.ts'

/**
 * The packaged hub (issue 11 point 7): `ota build`, the .deb unpacked into a scratch root, and its hub run with
 * the runtime it carries on the built JavaScript, beside the same hub run through tsx (hub-footprint.ts) in
 * the same run, on the same cloud, printer and data directory (so the same enrolled hub): idle RSS after
 * IDLE_MS, and start-up (spawn → the printer online in the API, reported by the new process), median of
 * STARTS restarts each; and the package's size. Goals: idle RSS at most 80 MB, start-up at most 1.5 s.
 */
const STARTS = Number(process.env.BENCH_HUB_STARTS ?? 5)
const IDLE_MS = 3000
const VERSION = '0.0.1'

/** VmRSS in MB of a process, from /proc. */
function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN) / 1024
}

async function poll(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 5))
  }
}

export async function benchHubPackage(): Promise<void> {
  const simulator = await startPrinterSimulator({ language: 'escpos', name: 'Bench receipt' })
  const children: ChildProcess[] = []
  try {
    // The package.
    const work = await newTempDir('bench-package-')
    const keys = JSON.parse(runCli('ota/cli.ts', ['keygen', '--out', path.join(work, 'keys')], {}).stdout)
    const t0 = nowMs()
    const build = runCli('ota/cli.ts', ['build', '--version', VERSION, '--out', path.join(work, 'out')], {
      OTA_SIGNING_KEY: keys.private_key_file,
    })
    const buildS = (nowMs() - t0) / 1000
    if (build.status !== 0) throw new Error(`ota build failed: ${build.stderr}`)
    const installers = (
      JSON.parse(build.stdout) as { installers: { filename: string; size_bytes: number }[] }
    ).installers
    const deb = installers.find((i) => i.filename.endsWith('.deb'))!
    const tarball = installers.find((i) => i.filename.endsWith('.tar.gz'))!
    const scratch = path.join(work, 'root')
    execFileSync('dpkg-deb', ['-x', path.join(work, 'out', deb.filename), scratch])
    const installedKb = Number(
      /^ Installed-Size: (\d+)$/m.exec(
        execFileSync('dpkg-deb', ['--info', path.join(work, 'out', deb.filename)], { encoding: 'utf8' }),
      )?.[1],
    )
    const runtimeMb = statSync(path.join(scratch, 'opt/print-hub/current/runtime/bin/node')).size / 1e6

    // The tsx hub: enrolled, idle, restarted (hub-footprint.ts).
    const cloud = await startCloudProcess()
    const account = await setUpAccount(cloud, 'Bench shop')
    const api = new ApiClient(cloud.url, account.accessToken)
    let tsxHub = await startHubProcess({
      cloudUrl: cloud.url,
      enroll: account.enrollmentToken,
      printers: [simulator.uri],
      env: PRODUCTION_HUB_ENV,
    })
    const printerId = (await api.waitForPrinters(1))[0]!.printer_id
    await new Promise((r) => setTimeout(r, IDLE_MS))
    const tsxMemory = hubMemory(tsxHub)
    const tsxStarts = await measureStartUps({
      hub: tsxHub,
      api,
      cloudUrl: cloud.url,
      printerUri: simulator.uri,
      printerId,
      env: PRODUCTION_HUB_ENV,
      times: STARTS,
    })
    tsxHub = tsxStarts.hub
    await new Promise((r) => setTimeout(r, IDLE_MS))
    const tsxIdleAfter = hubMemory(tsxHub).rssMb
    await tsxHub.stop()
    await poll(async () => !(await printerOnline(api, printerId)), 5000).catch(() => {})

    // The packaged hub on the same data directory: the same hub and printer.
    const bin = path.join(scratch, 'opt/print-hub/bin/print-hub')
    const args = ['run', '--cloud', cloud.url, '--data', tsxHub.dataDir, '--printer', simulator.uri]
    const env: NodeJS.ProcessEnv = { ...process.env, ...PRODUCTION_HUB_ENV }
    delete env.NODE_OPTIONS
    const readyMs: number[] = []
    const onlineMs: number[] = []
    let packaged: ChildProcess | undefined
    for (let i = 0; i < STARTS; i++) {
      if (packaged) {
        await new Promise((r) => setTimeout(r, 500))
        packaged.kill('SIGTERM')
        await exitOf(packaged)
        await poll(async () => !(await printerOnline(api, printerId)), 3000).catch(() => {})
      }
      const spawnedAt = Date.now()
      const started = nowMs()
      packaged = spawn(bin, args, { cwd: work, env, stdio: ['ignore', 'pipe', 'inherit'] })
      children.push(packaged)
      await waitForLogLine(packaged, (line) => line.msg === 'hub ready')
      readyMs.push(nowMs() - started)
      await poll(() => printerOnline(api, printerId, spawnedAt), 20_000)
      onlineMs.push(nowMs() - started)
    }
    await new Promise((r) => setTimeout(r, IDLE_MS))
    const packagedRss = rssMb(packaged!.pid!)
    const cmdline = readFileSync(`/proc/${packaged!.pid}/cmdline`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .slice(0, -7)

    const mb = (n: number) => `${n.toFixed(1)} MB`
    const ms = (n: number) => `${n.toFixed(0)} ms`
    const packagedOnline = median(onlineMs)
    const tsxOnline = median(tsxStarts.runs.map((r) => r.onlineMs))
    const lines = [
      `hub package (ota build ${VERSION}, ${process.arch}; packaged hub: ${cmdline.map((c) => (c.startsWith('/') ? path.relative(scratch, c) : c)).join(' ')})`,
      `  package: .deb ${mb(deb.size_bytes / 1e6)}, tarball ${mb(tarball.size_bytes / 1e6)}, installed ${mb((installedKb * 1024) / 1e6)} (runtime ${mb(runtimeMb)}); ota build ${buildS.toFixed(1)} s`,
      `  idle RSS after ${IDLE_MS / 1000} s: packaged ${mb(packagedRss)} (goal ≤ 80 MB) vs tsx ${mb(tsxMemory.rssMb)} fresh, ${mb(tsxIdleAfter)} after its restarts; ratio ${(packagedRss / tsxIdleAfter).toFixed(2)}`,
      `  start-up to printer online (median of ${STARTS}): packaged ${ms(packagedOnline)} (goal ≤ 1500 ms) vs tsx ${ms(tsxOnline)}; ratio ${(packagedOnline / tsxOnline).toFixed(2)}`,
      `  start-up to "hub ready" (median): packaged ${ms(median(readyMs))} vs tsx ${ms(median(tsxStarts.runs.map((r) => r.readyMs)))}`,
    ]
    for (const line of lines) console.log(line)
  } finally {
    for (const child of children) if (!hasExited(child)) child.kill('SIGKILL')
    await Promise.all(children.map((child) => exitOf(child)))
    await stopAll()
    await simulator.close()
  }
}

// Run alone: `npx tsx test/bench/hub-package.ts`.
if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'test/bench/hub-package.ts'))
  await benchHubPackage()
