import type { Agent } from '../../protocol/agent.ts'
import { csrfField, type Html, html, raw } from './layout.ts'

/**
 * The LAN printing part of a hub's page (docs/console.md): whether the hub may serve the print API on its LAN
 * (off unless enabled), where it serves it while it says so, with the digests a till pins its certificate by
 * (the fallback for tills that cannot find the hub by DNS-SD), and, for an owner, the button that turns it on
 * or off.
 */
export function hubLanSection(hub: Agent, owner: boolean, csrfToken: string): Html {
  const { enabled, endpoint } = hub.lan_api
  const where = endpoint
    ? html`<p>The hub serves it at:</p>
<dl class="facts">
<dt>Addresses</dt><dd><ul>${endpoint.urls.map((url) => html`<li><code>${url}</code></li>`)}</ul></dd>
<dt>Certificate SHA-256</dt><dd><code>${endpoint.cert_sha256}</code></dd>
<dt>Key SHA-256 (SPKI)</dt><dd><code>${endpoint.spki_sha256}</code></dd>
</dl>
<p class="muted">A till that cannot find the hub by DNS-SD calls one of these addresses and pins the certificate, or its key (which stays the same when the certificate is renewed), by these digests.</p>`
    : enabled
      ? html`<p class="muted">The hub has not said where it serves it (it is offline, or runs a release without LAN printing).</p>`
      : ''
  const toggle = owner
    ? html`<form class="inline" method="post" action="/console/hubs/${hub.agent_id}/lan/${enabled ? 'disable' : 'enable'}">${csrfField(csrfToken)}<button type="submit"${enabled ? raw(' class="danger"') : ''}>${enabled ? 'Turn LAN printing off' : 'Turn LAN printing on'}</button></form>`
    : html`<p class="muted">Only an owner of this account can turn it on or off.</p>`
  return html`<h2 id="lan-printing">LAN printing</h2>
<p>${
    enabled
      ? 'On: tills of this account can print through this hub on its local network while the internet is down.'
      : 'Off: the hub prints only what comes through this service.'
  }</p>
${where}
${toggle}`
}
