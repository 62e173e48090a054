const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether `text` is a UUID (RFC 4122 text form), as every id the cloud hands out is; anything else names nothing. */
export const isUuid = (text: string): boolean => UUID.test(text)
