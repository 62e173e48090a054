export { ApiError, isApiError } from '../print-api/api-error.ts'
