import { int, MiB } from './setting-builders.ts'

/** Documents as they come in: their size, fetching them from a URL, and inspecting them. */
export const DOCUMENT_SETTINGS = {
  maxDocumentBytes: int('MAX_DOCUMENT_BYTES', 1024, 1024 * MiB, 50 * MiB, 'largest document (413 beyond)'),
  fetchConnectTimeoutMs: int('FETCH_CONNECT_TIMEOUT_MS', 100, 60000, 5000, 'URL documents: connect timeout'),
  fetchTotalTimeoutMs: int('FETCH_TOTAL_TIMEOUT_MS', 100, 300000, 30000, 'URL documents: total timeout'),
  fetchMaxRedirects: int('FETCH_MAX_REDIRECTS', 0, 10, 3, 'URL documents: redirects followed'),
  dnsTimeoutMs: int('DNS_TIMEOUT_MS', 50, 30000, 2000, 'URL documents: timeout of one DNS query'),
  dnsTries: int('DNS_TRIES', 1, 5, 2, 'URL documents: tries of each DNS query'),
  inspectionTimeoutMs: int('INSPECTION_TIMEOUT_MS', 100, 300000, 15000, 'Ghostscript inspection deadline'),
  inspectionMaxConcurrent: int('INSPECTION_MAX_CONCURRENT', 1, 64, 2, 'Ghostscript inspections at once'),
  inspectionMaxQueued: int('INSPECTION_MAX_QUEUED', 0, 10000, 32, 'inspections waiting (503 beyond)'),
  inspectionMaxQueuedPerAccount: int(
    'INSPECTION_MAX_QUEUED_PER_ACCOUNT',
    0,
    10000,
    8,
    'inspections one account may have waiting (503 beyond, for that account only)',
  ),
}
