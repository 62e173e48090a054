import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readResult, readTrial } from '../../../hub/update/update-records.ts'
import { ROOT } from '../../helpers/cli.ts'
import { tempDir } from '../../helpers/temp-dir.ts'

// The launcher (packaging/print-hub.sh) run for real by /bin/sh on an install root whose releases carry a
// stand-in `node`: a script that says which release ran, with which arguments, and exits with FAKE_EXIT.

/** The V8 flags the launcher gives the hub (packaging/print-hub.sh: its idle memory). */
const NODE_FLAGS = '--max-semi-space-size=1 --optimize-for-size --single-threaded --liftoff-only'

describe('the launcher: runs `current`, and rolls back a release on trial that did not come up', () => {
  let dir: ReturnType<typeof tempDir>
  let root: string
  const fakeRelease = (version: string) => {
    const bin = path.join(root, 'releases', version, 'runtime/bin')
    mkdirSync(bin, { recursive: true })
    mkdirSync(path.join(root, 'releases', version, 'lib'), { recursive: true })
    writeFileSync(
      path.join(bin, 'node'),
      `#!/bin/sh\necho "ran ${version} $PRINT_HUB_INSTALL_ROOT $*"\nexit \${FAKE_EXIT:-0}\n`,
    )
    chmodSync(path.join(bin, 'node'), 0o755)
  }
  const launch = () => {
    const result = spawnSync(path.join(root, 'bin/print-hub'), ['run', '--cloud', 'http://127.0.0.1:1'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    })
    return { status: result.status, stdout: result.stdout, stderr: result.stderr }
  }
  const current = () => readlinkSync(path.join(root, 'current'))
  const trialFile = () => path.join(root, 'update/trial')
  const onTrial = (fields: string) => {
    mkdirSync(path.join(root, 'update'), { recursive: true })
    writeFileSync(trialFile(), fields)
  }

  beforeEach(() => {
    dir = tempDir('launcher-')
    root = path.join(dir.path, 'opt/print-hub')
    mkdirSync(path.join(root, 'bin'), { recursive: true })
    copyFileSync(path.join(ROOT, 'packaging/print-hub.sh'), path.join(root, 'bin/print-hub'))
    chmodSync(path.join(root, 'bin/print-hub'), 0o755)
    fakeRelease('1.0.0')
    fakeRelease('1.1.0')
    symlinkSync('releases/1.1.0', path.join(root, 'current'))
  })
  afterEach(() => dir.remove())

  it('without a trial it execs the release `current` points at, naming the install root', () => {
    expect(launch()).toEqual({
      status: 0,
      stdout: `ran 1.1.0 ${root} ${NODE_FLAGS} ${root}/current/lib/hub.mjs run --cloud http://127.0.0.1:1\n`,
      stderr: '',
    })
    expect(existsSync(path.join(root, 'update/result'))).toBe(false)
  })

  it('the first start of a release on trial is counted, and runs it', () => {
    onTrial('version=1.1.0\nprevious=1.0.0\ndeadline=1\nstarts=0\n')
    expect(launch().stdout).toMatch(/^ran 1\.1\.0 /)
    expect(readTrial(trialFile())).toEqual({ version: '1.1.0', previous: '1.0.0', deadline: 1, starts: 1 })
    expect(current()).toBe('releases/1.1.0')
  })

  it('a second start without confirmation rolls back: current flipped, result recorded, trial gone', () => {
    onTrial(
      'version=1.1.0\nprevious=1.0.0\ndeadline=1\nstarts=1\nreason=it did not connect to the cloud within 120 s\n',
    )
    const run = launch()
    expect(run.stdout).toMatch(/^ran 1\.0\.0 /)
    expect(run.stderr).toBe('print-hub: release 1.1.0 did not come up; rolled back to 1.0.0\n')
    expect(current()).toBe('releases/1.0.0')
    expect(existsSync(trialFile())).toBe(false)
    expect(readResult(path.join(root, 'update/result'))).toEqual({
      version: '1.1.0',
      status: 'failed',
      failure: 'rolled_back',
      detail: 'it did not connect to the cloud within 120 s; rolled back to 1.0.0',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/),
    })
    // The next start runs the previous release as usual.
    expect(launch().stdout).toMatch(/^ran 1\.0\.0 /)
  })

  it('a release that crashed says so when it left no reason', () => {
    onTrial('version=1.1.0\nprevious=1.0.0\ndeadline=1\nstarts=1\n')
    launch()
    expect(readResult(path.join(root, 'update/result'))?.detail).toBe(
      'it stopped before it connected to the cloud; rolled back to 1.0.0',
    )
  })

  it('a trial naming a previous release that is not a version or not there is recorded, not followed', () => {
    onTrial('version=1.1.0\nprevious=../../../tmp\ndeadline=1\nstarts=1\n')
    expect(launch().stdout).toMatch(/^ran 1\.1\.0 /)
    expect(current()).toBe('releases/1.1.0')
    expect(readFileSync(path.join(root, 'update/result'), 'utf8')).toContain('failure=rolled_back\n')
    expect(existsSync(trialFile())).toBe(false)
  })
})
