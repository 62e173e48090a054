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
