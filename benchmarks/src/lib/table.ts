/**
 * Markdown tables padded to align in a terminal too, so the console output and `RESULTS.md` are the
 * same text: the tuner's renderer, shared.
 *
 * @module
 */
export { type Align, type Column, renderTable } from '@flowing/tune'
