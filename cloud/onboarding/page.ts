import { createHash } from 'node:crypto'

/**
 * The hosted onboarding page (issue 10, point 7): plain server-rendered HTML, no script. Its one stylesheet is
 * inline and allowed by its hash (CSP Level 3 hash-source), so the policy can be `default-src 'none'`.
 * Colours: #1a1a1a on #fff (17:1), #fff on #1d4ed8 (6.7:1), #b91c1c on #fff (6.5:1) — all above WCAG 1.4.3's 4.5:1.
 */
const STYLE = `
body{margin:0;font:1.05rem/1.5 system-ui,sans-serif;color:#1a1a1a;background:#fff}
main{max-width:32rem;margin:0 auto;padding:1.5rem 1rem}
h1{font-size:1.5rem;margin:0 0 1rem}
ol{padding-left:1.25rem}
label{display:block;font-weight:600;margin:1.25rem 0 .25rem}
input{box-sizing:border-box;width:100%;font:inherit;font-size:1.4rem;letter-spacing:.1em;text-transform:uppercase;padding:.6rem;border:2px solid #1a1a1a;border-radius:.4rem}
button{margin-top:1rem;width:100%;font:inherit;font-weight:600;padding:.75rem;color:#fff;background:#1d4ed8;border:0;border-radius:.4rem;cursor:pointer}
input:focus,button:focus{outline:3px solid #b45309;outline-offset:2px}
.hint{margin:.25rem 0 0}
.error{color:#b91c1c;font-weight:600;margin:.5rem 0 0}
.nowrap{white-space:nowrap}
`

const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`

/**
 * The page's security headers: nothing loads but its own inline style, the form posts only here (or follows
 * the redirect to the partner's return_uri origin, which CSP form-action also governs), no framing, and no
 * Referer carrying the link's token to anyone.
 */
export function pageHeaders(returnOrigin?: string): Record<string, string> {
  const formAction = ["'self'", ...(returnOrigin ? [returnOrigin] : [])].join(' ')
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; style-src ${STYLE_HASH}; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  }
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  )

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`
}

/** The form: what to do, and the code input (with the error of a wrong code, announced and linked to it). */
export function pairingPage(hubName: string, error?: string, typed = ''): string {
  const describedBy = error ? 'code-hint code-error' : 'code-hint'
  return layout(
    'Connect your printer hub',
    `<h1>Connect your printer hub</h1>
<p>This connects the hub <strong>${escapeHtml(hubName)}</strong> to your account.</p>
<ol>
<li>Plug the hub in next to its printer and connect it to the network.</li>
<li>Within a minute the printer prints a slip with a pairing code.</li>
<li>Type that code below.</li>
</ol>
<form method="post">
<label for="code">Pairing code</label>
<input id="code" name="code" type="text" required autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="16" value="${escapeHtml(typed)}" aria-describedby="${describedBy}"${error ? ' aria-invalid="true" autofocus' : ''}>
<p id="code-hint" class="hint">8 letters, as printed: for example <span class="nowrap">BCDF-GHJK</span>.</p>
${error ? `<p id="code-error" class="error" role="alert">${escapeHtml(error)}</p>\n` : ''}<button type="submit">Pair hub</button>
</form>`,
  )
}

/** A page that only explains (a used, expired or unknown link; too many attempts). */
export function messagePage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`)
}
