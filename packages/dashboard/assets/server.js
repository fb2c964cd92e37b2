// The server: reads, and actions with the CSRF token (offered only when the session allows them).
import { h, notice } from './dom.js'
import { base, state } from './state.js'

export async function get(path) {
  const res = await fetch(`${base}${path}`, { credentials: 'same-origin', headers: { accept: 'application/json' } })
  const body = await res.json().catch(() => ({}))
  if (!res.ok) throw new Error(body.error?.message ?? `HTTP ${res.status}`)
  return body
}

export const may = (action) => state.session.actions?.[action] === true

export async function act(path, body, done) {
  try {
    const res = await fetch(`${base}/api/loops/${encodeURIComponent(state.current.loop)}/${path}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-flowing-csrf': state.session.csrf },
      body: JSON.stringify(body ?? {}),
    })
    const answer = await res.json().catch(() => ({}))
    if (!res.ok) throw new Error(answer.error?.message ?? `HTTP ${res.status}`)
    notice(done(answer), true)
    state.render()
  } catch (error) {
    notice(`Refused: ${error.message}`)
  }
}

export function actionButton(action, label, run, options = {}) {
  if (!may(action)) return undefined
  return h(
    'button',
    { type: 'button', className: options.danger ? 'danger' : '', testid: options.testid, onclick: run },
    label,
  )
}
