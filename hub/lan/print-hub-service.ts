import { createHash } from 'node:crypto'

/** The DNS-SD service type a till browses for to find the hub's LAN print API (RFC 6763 §7). */
export const PRINT_HUB_SERVICE_TYPE = '_print-hub._tcp'

export interface PrintHubTxtInput {
  /** The hub's agent id. */
  hubId: string
  accountId: string
  /** The LAN API's TLS certificate, DER encoded. */
  certificateDer: Uint8Array
}

/**
 * The TXT record of the hub's service. `cert_sha256` lets a till match the certificate the LAN API presents
 * with the one the cloud publishes for the hub.
 */
export function printHubTxt(input: PrintHubTxtInput): Record<string, string> {
  return {
    v: '1',
    hub_id: input.hubId,
    account_id: input.accountId,
    api: '/api/v1',
    tls: '1',
    cert_sha256: createHash('sha256').update(input.certificateDer).digest('hex'),
  }
}
