import { spawn } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { acceptsConnections } from './peer-process.ts'
import { answersPing, type RedisServer, startRedisServer } from './redis-server.ts'

/** Whether a process with this id exists (signal 0 checks without signalling). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** A process's state letter from /proc (T: stopped by a signal). */
function processState(pid: number): string {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] ?? ''
}

/** The id of the redis-server listening on `port`, from its own INFO. */
async function serverPid(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let reply = ''
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write('INFO server\r\n'))
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1')
      const pid = /process_id:(\d+)/.exec(reply)
      if (pid) {
        socket.end()
        resolve(Number(pid[1]))
      }
    })
    socket.once('error', reject)
  })
}

describe('redis-server test peer', () => {
  let server: RedisServer | undefined
  afterEach(async () => {
    await server?.stop()
    server = undefined
  })

  it('starts on 127.0.0.1, answers PING, keeps nothing on disk, and stop() leaves nothing behind', async () => {
    server = await startRedisServer()
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`)
    expect(await answersPing(server.port)).toBe(true)
    const pid = await serverPid(server.port)
    expect(alive(pid)).toBe(true)
    expect(server.log()).toMatch(/Ready to accept connections/)

    await server.stop()
    expect(alive(pid)).toBe(false)
    expect(await acceptsConnections(server.port)).toBe(false)
    expect(existsSync(server.dir)).toBe(false)
    await server.stop() // a second stop is harmless
  })

  it('pause() stops the process until resume(); stop() ends a paused server', async () => {
    server = await startRedisServer()
    const pid = await serverPid(server.port)
    server.pause()
    // SIGSTOP is delivered asynchronously: the state changes shortly after kill() returns.
    await expect.poll(() => processState(pid)).toBe('T')
    const ping = answersPing(server.port)
    server.resume()
    expect(await ping).toBe(true)
    server.pause()
    await server.stop()
    expect(alive(pid)).toBe(false)
    expect(await acceptsConnections(server.port)).toBe(false)
  })

  it('does not outlive a test process that is killed before it stops the server', async () => {
    const script = [
      `const { startRedisServer } = await import(${JSON.stringify(path.join(import.meta.dirname, 'redis-server.ts'))})`,
      'const server = await startRedisServer()',
      'console.log(JSON.stringify({ port: server.port, dir: server.dir }))',
      "process.kill(process.pid, 'SIGKILL')",
    ].join('\n')
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    const signal = await new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)))
    expect(signal).toBe('SIGKILL')
    const { port, dir } = JSON.parse(output) as { port: number; dir: string }
    expect(port).toBeGreaterThan(0)
    await expect.poll(() => acceptsConnections(port)).toBe(false)
    // The killed process could not remove its directory: this test does, so that none is left in /tmp.
    rmSync(dir, { recursive: true, force: true })
  })

  it('starts again on the port of a stopped server', async () => {
    server = await startRedisServer()
    const { port } = server
    await server.stop()
    server = await startRedisServer({ port })
    expect(server.port).toBe(port)
    expect(await answersPing(port)).toBe(true)
  })
})
