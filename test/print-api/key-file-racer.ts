import { keyFileText } from '../../print-api/key-file.ts'

/**
 * One of several processes making the same key files at once (key-file.test.ts): round N starts for every
 * process at the same instant, `start` + N × `everyMs` (one clock, busy-waited for); prints what it read, as
 * JSON.
 */
const [dir, rounds, start, everyMs] = [
  process.argv[2] ?? '',
  Number(process.argv[3]),
  Number(process.argv[4]),
  Number(process.argv[5]),
]
const texts: string[] = []
for (let round = 0; round < rounds; round += 1) {
  while (Date.now() < start + round * everyMs) {}
  texts.push(keyFileText(`${dir}/key-${round}`, () => `key ${round} of ${process.pid}`))
}
process.stdout.write(JSON.stringify(texts))
