/** A job report as `topic[:status or reason][:failure reason]` (`job-status:failed:interrupted`), for assertions. */
export function describeReport(topic: string, payload: object): string {
  const fields = payload as { status?: string; failure_reason?: string; reason?: string }
  const detail = fields.status ? [fields.status, fields.failure_reason] : [fields.reason]
  return [topic, ...detail].filter(Boolean).join(':')
}
