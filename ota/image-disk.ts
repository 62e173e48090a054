import { execFile, spawn } from 'node:child_process'
import { closeSync, openSync, readdirSync, renameSync, truncateSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { partialName } from './cache-entry.ts'
import { SYSTEM_PATH } from './image-chroot.ts'
import {
  BOOT_LABEL,
  type ImageLayout,
  imageLayout,
  MIB,
  ROOT_LABEL,
  rootFileSystemBytes,
  sfdiskScript,
} from './image-layout.ts'

const run = promisify(execFile)
const options = { env: { PATH: SYSTEM_PATH, MTOOLS_SKIP_CHECK: '1' }, maxBuffer: 16 * 1024 * 1024 }

/**
 * The card image, made from two directories without loop devices or mounts: the root file system by
 * `mkfs.ext4 -d` (e2fsprogs copies a tree into the new file system, owners, modes and extended attributes
 * kept), the boot partition by mkfs.vfat and mtools' mcopy, the partition table by sfdisk on the image
 * file, and each file system copied to its offset.
 */
export async function makeDiskImage(rootDir: string, bootDir: string, work: string, image: string) {
  const { stdout } = await run('du', ['--summarize', '--block-size=1', rootDir], options)
  const layout = imageLayout(rootFileSystemBytes(Number(stdout.split('\t')[0])))

  const rootFs = path.join(work, 'root.ext4')
  createSparse(rootFs, layout.root.sizeBytes)
  // -m 1: of the reserved blocks root keeps, 1% is enough on an appliance that only root and the hub write.
  await run(
    'mkfs.ext4',
    ['-q', '-F', '-L', ROOT_LABEL, '-m', '1', '-d', rootDir, rootFs, `${layout.root.sizeBytes / 1024}k`],
    options,
  )

  const bootFs = path.join(work, 'boot.vfat')
  await run(
    'mkfs.vfat',
    ['-F', '32', '-n', BOOT_LABEL, '-C', bootFs, String(layout.boot.sizeBytes / 1024)],
    options,
  )
  const entries = readdirSync(bootDir).map((entry) => path.join(bootDir, entry))
  if (entries.length === 0) throw new Error('nothing for the boot partition: raspi-firmware wrote no files')
  await run('mcopy', ['-s', '-i', bootFs, ...entries, '::'], options)

  createSparse(image, layout.totalBytes)
  await sfdisk(image, sfdiskScript(layout))
  for (const [fs, partition] of [
    [bootFs, layout.boot],
    [rootFs, layout.root],
  ] as const)
    await run(
      'dd',
      [
        `if=${fs}`,
        `of=${image}`,
        'bs=1M',
        `seek=${partition.startBytes / MIB}`,
        'conv=notrunc,sparse',
        'status=none',
      ],
      options,
    )
  return layout satisfies ImageLayout
}

function createSparse(file: string, bytes: number): void {
  closeSync(openSync(file, 'w'))
  truncateSync(file, bytes)
}

function sfdisk(image: string, script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sfdisk', ['--quiet', '--no-reread', '--no-tell-kernel', image], {
      env: options.env,
      stdio: ['pipe', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk
    })
    child.once('error', reject)
    child.once('close', (status) =>
      status === 0 ? resolve() : reject(new Error(`sfdisk ${image}: exit ${status}: ${stderr.trim()}`)),
    )
    child.stdin.end(script)
  })
}

/** `xz -T0` of `image` into `compressed` (written under a partial name, then renamed into place). */
export async function compress(image: string, compressed: string): Promise<void> {
  const partial = partialName(compressed)
  await new Promise<void>((resolve, reject) => {
    const out = openSync(partial, 'w')
    const child = spawn('xz', ['--threads=0', '--stdout', image], {
      env: options.env,
      stdio: ['ignore', out, 'pipe'],
    })
    let stderr = ''
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk
    })
    child.once('error', reject)
    child.once('close', (status) => {
      closeSync(out)
      status === 0 ? resolve() : reject(new Error(`xz ${image}: exit ${status}: ${stderr.trim()}`))
    })
  })
  renameSync(partial, compressed)
}
