// The console's one script: progressive enhancement only (every page works without it). Loaded from
// /console/assets, as the CSP allows no inline script.

// Copy buttons: <button data-copy="ELEMENT_ID">: copies that element's text and says so.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false
  button.addEventListener('click', async () => {
    const source = document.getElementById(button.dataset.copy)
    if (!source) return
    try {
      await navigator.clipboard.writeText(source.textContent.trim())
      button.textContent = 'Copied'
    } catch {
      button.textContent = 'Select and copy it'
    }
  })
}

// Live job page: <div data-job-state="URL" data-job-final="false">. While the job is in flight, its state is
// read from URL (GET /console/jobs/:id/state, JSON) about every second and written into the elements marked
// data-job-field (text, and the datetime of <time> elements); the badge's colour class follows the status;
// the cancel form (data-job-cancel) goes once the job can no longer be cancelled. It stops when the job is
// printed, failed or cancelled, when the answer is not the state (signed out, not found), or after a few
// failed reads in a row. Polling, not server-sent events: a job changes on whichever cloud node hears its
// hub, so any node answers from the database alike, and nothing is held open between reads.
const jobState = document.querySelector('[data-job-state]')
if (jobState && jobState.dataset.jobFinal !== 'true') {
  const url = jobState.dataset.jobState
  let failures = 0
  const apply = (state) => {
    for (const [field, text] of Object.entries(state.text)) {
      const element = document.querySelector(`[data-job-field="${field}"]`)
      if (!element) continue
      if (element.textContent !== text) element.textContent = text
      if (element.tagName === 'TIME' && state.times[field]) element.setAttribute('datetime', state.times[field])
      if (field === 'status') element.className = state.badge ? `badge ${state.badge}` : 'badge'
    }
    const cancel = document.querySelector('form[data-job-cancel]')
    if (cancel && !state.cancellable) cancel.remove()
    jobState.dataset.jobFinal = String(state.final)
  }
  const read = async () => {
    if (document.hidden) return true
    try {
      const response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual' })
      const type = response.headers.get('content-type') ?? ''
      if (!response.ok || !type.startsWith('application/json')) return false
      const state = await response.json()
      failures = 0
      apply(state)
      return !state.final
    } catch {
      failures += 1
      return failures < 5
    }
  }
  const poll = async () => {
    if (await read()) setTimeout(poll, 1000)
  }
  setTimeout(poll, 1000)
}
