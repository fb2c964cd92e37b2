/** Rendering of the label given at guard time; done lazily, only when a message needs it. */
import type { AttemptLabel } from '../contracts.js'

/** `order.paid (key "o-1", id 7)`, the string itself, or `attempt #epoch` when nothing was given. */
export function renderLabel(label: AttemptLabel | string | undefined, epoch: number): string {
  if (typeof label === 'string') return label
  if (label === undefined) return `attempt #${epoch}`
  const parts: string[] = []
  if (label.key !== undefined) parts.push(`key ${quote(label.key)}`)
  if (label.id !== undefined) parts.push(`id ${quote(label.id)}`)
  const head = label.type === undefined ? `attempt #${epoch}` : String(label.type)
  return parts.length === 0 ? head : `${head} (${parts.join(', ')})`
}

function quote(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value)
}
