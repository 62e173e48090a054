import { open } from 'node:fs/promises'

const CHUNK = 64 * 1024

/** Reads a file in 64 KiB chunks and hands each to `write` in turn: a 50 MB document never sits whole in memory. */
export async function streamFile(file: string, write: (chunk: Buffer) => Promise<void>): Promise<void> {
  const handle = await open(file, 'r')
  try {
    const buffer = Buffer.alloc(CHUNK)
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, null)
      if (bytesRead === 0) return
      await write(Buffer.from(buffer.subarray(0, bytesRead)))
    }
  } finally {
    await handle.close()
  }
}
