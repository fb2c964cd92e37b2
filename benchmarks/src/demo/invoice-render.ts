/**
 * The demo's CPU-bound handler, run on a worker thread by `@flowing/threads`: "renders" an invoice
 * (chained SHA-256 digests, about 8 ms of CPU). An invoice marked `runaway` never returns — the
 * deadline must stop it. Compiled to `dist/demo/invoice-render.js`; plain Node loads it on the threads.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import { threadId } from 'node:worker_threads'

/** One invoice to render. */
export interface Invoice {
  readonly invoiceId: string
  readonly lines: number
  /** A bug in a template: the renderer loops forever. */
  readonly runaway?: boolean
}

/** What a render answers: the document's digest and the thread that made it. */
export interface Rendered {
  readonly invoiceId: string
  readonly digest: string
  readonly thread: number
}

/** Renders `invoice` (CPU only: no awaits). */
export default function render(invoice: Invoice): Rendered {
  if (invoice.runaway === true) for (;;);
  let digest = Buffer.from(invoice.invoiceId)
  for (let line = 0; line < invoice.lines; line++) digest = createHash('sha256').update(digest).digest()
  return { invoiceId: invoice.invoiceId, digest: digest.toString('hex').slice(0, 12), thread: threadId }
}
