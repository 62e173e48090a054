import { createSocket } from 'node:dgram'
import { isIPv4, isIPv6 } from 'node:net'

// A DNS server on 127.0.0.1 (UDP, RFC 1035 §4) for tests: it answers A and AAAA questions from a table,
// or stays silent. Only what c-ares asks is understood: one question per query.

const TYPE_A = 1
const TYPE_AAAA = 28
const CLASS_IN = 1

export interface TestDnsServer {
  /** `127.0.0.1:port`, for `Resolver.setServers`. */
  address: string
  /** Questions received, as `name type` (`docs.example.com A`). */
  questions: string[]
  close(): Promise<void>
}

/** `records` maps a name to its addresses; `null` makes the server never answer. */
export async function startDnsServer(records: Record<string, string[]> | null): Promise<TestDnsServer> {
  const socket = createSocket('udp4')
  const questions: string[] = []
  socket.on('message', (query, peer) => {
    const question = parseQuestion(query)
    if (question === null) return
    questions.push(
      `${question.name} ${question.type === TYPE_AAAA ? 'AAAA' : question.type === TYPE_A ? 'A' : question.type}`,
    )
    if (records === null) return
    socket.send(answer(query, question, records), peer.port, peer.address)
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  return {
    address: `127.0.0.1:${socket.address().port}`,
    questions,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  }
}

interface Question {
  name: string
  type: number
  /** Offset of the byte after the question (its QTYPE and QCLASS included). */
  end: number
}

function parseQuestion(query: Buffer): Question | null {
  if (query.length < 12 || query.readUInt16BE(4) !== 1) return null
  const labels: string[] = []
  let at = 12
  while (at < query.length && query[at] !== 0) {
    const length = query[at] as number
    labels.push(query.toString('latin1', at + 1, at + 1 + length))
    at += 1 + length
  }
  if (at + 5 > query.length) return null
  return { name: labels.join('.').toLowerCase(), type: query.readUInt16BE(at + 1), end: at + 5 }
}

function answer(query: Buffer, question: Question, records: Record<string, string[]>): Buffer {
  const known = records[question.name]
  const matching = (known ?? []).filter((address) =>
    question.type === TYPE_A ? isIPv4(address) : question.type === TYPE_AAAA && isIPv6(address),
  )
  const header = Buffer.alloc(12)
  query.copy(header, 0, 0, 2) // ID
  // QR=1, opcode 0, RD copied, RA=1; RCODE 3 (NXDOMAIN) for an unknown name, else 0 (an empty answer is NODATA).
  header.writeUInt16BE(0x8080 | (query.readUInt16BE(2) & 0x0100) | (known === undefined ? 3 : 0), 2)
  header.writeUInt16BE(1, 4)
  header.writeUInt16BE(matching.length, 6)
  const answers = matching.map((address) => {
    const data = question.type === TYPE_A ? ipv4Bytes(address) : ipv6Bytes(address)
    const record = Buffer.alloc(12)
    record.writeUInt16BE(0xc00c, 0) // the name: a pointer to the question's (RFC 1035 §4.1.4)
    record.writeUInt16BE(question.type, 2)
    record.writeUInt16BE(CLASS_IN, 4)
    record.writeUInt32BE(60, 6) // TTL
    record.writeUInt16BE(data.length, 10)
    return Buffer.concat([record, data])
  })
  return Buffer.concat([header, query.subarray(12, question.end), ...answers])
}

function ipv4Bytes(address: string): Buffer {
  return Buffer.from(address.split('.').map(Number))
}

function ipv6Bytes(address: string): Buffer {
  const [head = '', tail = ''] = address.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === '' ? [] : tail.split(':')
  const groups = address.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left
  const bytes = Buffer.alloc(16)
  for (const [i, group] of groups.entries()) bytes.writeUInt16BE(Number.parseInt(group, 16), i * 2)
  return bytes
}
