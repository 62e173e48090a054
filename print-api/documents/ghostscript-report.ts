/** Output lines longer than this are cut: only short status lines are read. */
const MAX_LINE = 4096

/** Splits a stream's text into lines as it arrives, keeping only the unfinished line between chunks. */
export class LineSplitter {
  #partial = ''

  constructor(private readonly onLine: (line: string) => void) {}

  feed(chunk: string): void {
    const lines = (this.#partial + chunk).split(/\r?\n/)
    this.#partial = (lines.pop() ?? '').slice(-MAX_LINE)
    for (const line of lines) this.onLine(line.slice(0, MAX_LINE))
  }
}

/** What Ghostscript said about one document, read line by line as it runs (never kept whole). */
export class GhostscriptReport {
  declaredPages: number | null = null
  lastPage = 0
  noPages = false
  repaired = false
  passwordNeeded = false

  line(line: string): void {
    const processing = /^Processing pages (\d+) through (\d+)\./.exec(line)
    if (processing) this.declaredPages = Number(processing[2]) - Number(processing[1]) + 1
    const page = /^Page (\d+)$/.exec(line)
    if (page) this.lastPage = Number(page[1])
    if (/No pages will be processed/i.test(line)) this.noPages = true
    // Ghostscript 10: "PDF file was repaired"; 9.x: "The file has been damaged", "attempt to recover",
    // "An error occurred while reading an XREF table"
    if (
      /file was repaired|has been damaged|attempt to (recover|reconstruct)|error occurred while reading an XREF/i.test(
        line,
      )
    ) {
      this.repaired = true
    }
    if (/requires a password|password did not work|cannot decrypt/i.test(line)) this.passwordNeeded = true
  }
}
