import { benchApiCreateJobs } from './api-create-jobs.ts'

/** `npm run bench`: every benchmark under test/bench, one after the other, each printing its figures. */
await benchApiCreateJobs()
