// DOM helpers: every string from the server becomes text, never HTML.
import { $ } from './state.js'

// h('td', { className: 'num' }, 'text', child): an element; strings become text nodes.
export function h(tag, props, ...children) {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null) continue
    if (name === 'dataset') Object.assign(el.dataset, value)
    else if (name.startsWith('on')) el.addEventListener(name.slice(2), value)
    else if (name === 'testid') el.setAttribute('data-testid', value)
    else el[name] = value
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue
    el.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
  return el
}

// A form's submit: no page load, `run` instead.
export function submit(event, run) {
  event.preventDefault()
  run()
}

// The children that are there (replaceChildren would show `undefined` as text).
export const present = (...children) => children.filter((c) => c !== undefined && c !== null && c !== false)
export const section = (title, ...children) => h('section', {}, h('h2', {}, title), ...children)
export const empty = (text) => h('p', { className: 'empty' }, text)
export const num = (n, digits = 1) =>
  typeof n === 'number' && Number.isFinite(n) ? (Number.isInteger(n) ? n : n.toFixed(digits)) : '—'
export const ms = (n) => (typeof n !== 'number' ? '—' : n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(1)} s`)
export const str = (v) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v))

export function table(columns, rows, options = {}) {
  if (rows.length === 0) return empty(options.empty ?? 'none')
  const head = h(
    'tr',
    {},
    columns.map((c) => h('th', { className: c.num ? 'num' : '' }, c.title)),
  )
  const body = rows.map((row) => {
    const tr = h('tr', { className: options.onPick ? 'pick' : '' })
    if (options.onPick) tr.addEventListener('click', (e) => e.target.tagName !== 'INPUT' && options.onPick(row, tr))
    for (const c of columns) {
      const v = c.cell(row)
      tr.append(h('td', { className: c.num ? 'num' : '' }, v instanceof Node ? v : str(v)))
    }
    return tr
  })
  return h('table', { testid: options.testid }, h('thead', {}, head), h('tbody', {}, body))
}

export function notice(text, ok = false) {
  const n = $('notice')
  n.textContent = text
  n.className = ok ? 'notice ok' : 'notice'
  n.hidden = false
  clearTimeout(notice.timer)
  notice.timer = setTimeout(() => (n.hidden = true), 6000)
}
