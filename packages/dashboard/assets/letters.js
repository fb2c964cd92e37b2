// Dead letters: filter, inspect, replay, purge (a purge asks first).
import { empty, h, ms, section, str, submit, table } from './dom.js'
import { go } from './navigation.js'
import { act, actionButton, get, may } from './server.js'
import { $, state } from './state.js'

export function letterFilterForm() {
  const q = state.current.query
  const type = h('input', { name: 'type', placeholder: 'type', value: q.get('type') ?? '', ariaLabel: 'type' })
  const errorClass = h(
    'select',
    { name: 'errorClass', ariaLabel: 'error class' },
    ['', 'retryable', 'non-retryable', 'unknown'].map((c) =>
      h('option', { value: c, selected: c === (q.get('errorClass') ?? '') }, c || 'any error class'),
    ),
  )
  const within = h(
    'select',
    { name: 'within', ariaLabel: 'time' },
    [
      ['', 'any time'],
      ['60000', 'last minute'],
      ['600000', 'last 10 minutes'],
      ['3600000', 'last hour'],
    ].map(([v, l]) => h('option', { value: v, selected: v === (q.get('within') ?? '') }, l)),
  )
  const apply = () =>
    go(
      'dead-letters',
      Object.fromEntries(
        [
          ['type', type.value],
          ['errorClass', errorClass.value],
          ['within', within.value],
        ].filter(([, v]) => v),
      ),
    )
  return h(
    'form',
    { className: 'row', onsubmit: (e) => submit(e, apply) },
    type,
    errorClass,
    within,
    h('button', { type: 'submit' }, 'Filter'),
  )
}

export function letterQuery(now) {
  const q = state.current.query
  const params = new URLSearchParams()
  for (const name of ['type', 'errorClass']) if (q.get(name)) params.set(name, q.get(name))
  if (q.get('within')) params.set('since', String(now - Number(q.get('within'))))
  return params
}

export async function renderDeadLetters() {
  const probe = await get(`/api/loops/${encodeURIComponent(state.current.loop)}/dead-letters?limit=1`)
  const params = letterQuery(probe.now)
  const data = await get(`/api/loops/${encodeURIComponent(state.current.loop)}/dead-letters?${params}`)
  state.letterSelection = new Set([...state.letterSelection].filter((id) => data.letters.some((l) => l.id === id)))
  const filter = Object.fromEntries(params)
  const detail = h('div', { id: 'letter', testid: 'letter' }, empty('Pick a letter to inspect it.'))
  const pickBox = (l) =>
    h('input', {
      type: 'checkbox',
      checked: state.letterSelection.has(l.id),
      ariaLabel: `select ${l.id}`,
      onchange: (e) => (e.target.checked ? state.letterSelection.add(l.id) : state.letterSelection.delete(l.id)),
    })
  const bulk = h(
    'div',
    { className: 'row' },
    actionButton(
      'replay',
      'Replay selected',
      () => state.letterSelection.size && act('dead-letters/replay', { ids: [...state.letterSelection] }, replayed),
      { testid: 'replay-selected' },
    ),
    actionButton(
      'purge',
      'Purge selected',
      () =>
        confirmThen(`Purge ${state.letterSelection.size} dead letters?`, () =>
          act('dead-letters/purge', { ids: [...state.letterSelection] }, purged),
        ),
      { danger: true, testid: 'purge-selected' },
    ),
    actionButton(
      'replay',
      `Replay all ${data.total} matching`,
      () => act('dead-letters/replay', { all: true, filter }, replayed),
      { testid: 'replay-all' },
    ),
    actionButton(
      'purge',
      `Purge all ${data.total} matching`,
      () =>
        confirmThen(`Purge all ${data.total} matching dead letters? This cannot be undone.`, () =>
          act('dead-letters/purge', { all: true, filter }, purged),
        ),
      { danger: true, testid: 'purge-all' },
    ),
  )
  $('main').replaceChildren(
    section(
      `Dead letters (${data.total} matching)`,
      letterFilterForm(),
      bulk,
      h(
        'div',
        { className: 'split' },
        h(
          'div',
          { className: 'scroll' },
          table(
            [
              ...(may('replay') || may('purge') ? [{ title: '', cell: pickBox }] : []),
              { title: 'type', cell: (l) => l.type },
              { title: 'error', cell: (l) => `${l.error.name}: ${l.error.message}` },
              { title: 'class', cell: (l) => l.error.errorClass },
              { title: 'attempts', num: true, cell: (l) => l.attempts },
              { title: 'age', num: true, cell: (l) => ms(data.now - l.at) },
            ],
            data.letters,
            { empty: 'no dead letters', testid: 'letters', onPick: (l, tr) => showLetter(l, detail, tr) },
          ),
        ),
        detail,
      ),
    ),
  )
  // The letter being inspected stays inspected when the list is drawn again (a new letter arrived).
  const again = data.letters.findIndex((l) => l.id === state.inspected)
  const row = again < 0 ? undefined : $('main').querySelector('[data-testid="letters"] tbody')?.rows[again]
  if (row) await showLetter(data.letters[again], detail, row)
}

export const replayed = (a) =>
  `Replayed ${a.replayed.length}${a.refused.length ? `, refused ${a.refused.length}: ${a.refused[0].error}` : ''}`
export const purged = (a) => `Purged ${a.purged}`

export function confirmThen(question, run) {
  const dialog = h(
    'dialog',
    { testid: 'confirm' },
    h('p', {}, question),
    h(
      'div',
      { className: 'row' },
      h('button', { type: 'button', testid: 'confirm-no', onclick: () => dialog.close() }, 'Cancel'),
      h(
        'button',
        {
          type: 'button',
          className: 'danger',
          testid: 'confirm-yes',
          onclick: () => {
            dialog.close()
            run()
          },
        },
        'Purge',
      ),
    ),
  )
  dialog.addEventListener('close', () => dialog.remove())
  document.body.append(dialog)
  dialog.showModal()
}

export function errorBlock(e) {
  const head = `${e.name}: ${e.message}`
  const stack = e.stack?.startsWith(head) ? e.stack.slice(head.length) : e.stack ? `\n${e.stack}` : ''
  const out = [h('pre', { testid: 'letter-error' }, `${head}${e.code ? ` [${e.code}]` : ''}${stack}`)]
  if (e.cause) out.push(h('p', { className: 'muted' }, 'caused by'), ...errorBlock(e.cause))
  return out
}

export async function showLetter(summary, detail, tr) {
  state.inspected = summary.id
  for (const row of tr.parentElement.children) row.classList.remove('chosen')
  tr.classList.add('chosen')
  let l
  try {
    l = (
      await get(`/api/loops/${encodeURIComponent(state.current.loop)}/dead-letters/${encodeURIComponent(summary.id)}`)
    ).letter
  } catch (error) {
    detail.replaceChildren(section(`Letter ${summary.id}`, h('p', {}, error.message)))
    return
  }
  const payload =
    l.payload && l.payload.hidden === true
      ? `hidden (${l.payload.bytes ?? '?'} bytes of JSON) — the app shows payloads with payloads: 'shown'`
      : JSON.stringify(l.payload, null, 2)
  detail.replaceChildren(
    section(
      `Letter ${l.id}`,
      h(
        'p',
        {},
        `${l.type}`,
        l.key === undefined ? '' : ` · key ${str(l.key)}`,
        ` · ${l.reason} · priority ${l.priority}`,
      ),
      h(
        'div',
        { className: 'row' },
        actionButton('replay', 'Replay', () => act('dead-letters/replay', { ids: [l.id] }, replayed), {
          testid: 'replay-one',
        }),
        actionButton(
          'purge',
          'Purge',
          () => confirmThen('Purge this dead letter?', () => act('dead-letters/purge', { ids: [l.id] }, purged)),
          { danger: true, testid: 'purge-one' },
        ),
      ),
      h('h3', {}, 'Payload'),
      h('pre', { testid: 'letter-payload' }, payload),
      h('h3', {}, 'Error'),
      ...errorBlock(l.error),
      h('h3', {}, 'Attempts'),
      attemptsTable(l.attempts),
    ),
  )
}

export function attemptsTable(attempts, start) {
  return table(
    [
      { title: '#', num: true, cell: (a) => a.attempt },
      ...(start === undefined ? [] : [{ title: 'start', num: true, cell: (a) => `+${ms(a.startedAt - start)}` }]),
      { title: 'outcome', cell: (a) => a.outcome },
      { title: 'duration', num: true, cell: (a) => ms(a.durationMs) },
      { title: 'error', cell: (a) => (a.error ? `${a.error.name}: ${a.error.message}` : '') },
    ],
    attempts,
    { empty: 'no finished attempt' },
  )
}
