import { benchApiCreateJobs } from './api-create-jobs.ts'
import { benchEndToEnd } from './e2e-latency.ts'

/** `npm run bench`: every benchmark under test/bench, one after the other, each printing its figures. */
await benchApiCreateJobs()
await benchEndToEnd()
await (await import('./pdf-render.ts')).benchPdfRender()
await (await import('./hub-package.ts')).benchHubPackage()
await (await import('./hub-package-arm64.ts')).benchHubPackageArm64()
await (await import('./multi-node.ts')).benchMultiNode()
await (await import('./webhook-delivery.ts')).benchWebhookDelivery()
await (await import('./webhooks-beside-dispatch.ts')).benchWebhooksBesideDispatch()
await (await import('./job-event-triggers.ts')).benchJobEventTriggers()
await (await import('./silent-printer.ts')).benchSilentPrinter()
