// A message's timeline: its attempts and every state change, found by id, by key, or by trace (a message
// and the follow-ups it posted).
import { empty, h, ms, section, str, submit, table } from './dom.js'
import { attemptsTable } from './letters.js'
import { go } from './navigation.js'
import { get } from './server.js'
import { $, state } from './state.js'

export async function renderTimeline() {
  const q = state.current.query
  const input = h('input', {
    name: 'find',
    placeholder: 'message id or key',
    value: q.get('id') ?? q.get('key') ?? q.get('trace') ?? '',
    ariaLabel: 'message id or key',
    size: 40,
  })
  const by = h(
    'select',
    { ariaLabel: 'find by' },
    h('option', { value: 'id', selected: !q.get('key') && !q.get('trace') }, 'by id'),
    h('option', { value: 'key', selected: !!q.get('key') }, 'by key'),
    h('option', { value: 'trace', selected: !!q.get('trace') }, 'by trace (with follow-ups)'),
  )
  const form = h(
    'form',
    { className: 'row', onsubmit: (e) => submit(e, () => go('timeline', { [by.value]: input.value })) },
    input,
    by,
    h('button', { type: 'submit' }, 'Find'),
  )
  const out = h('div', { testid: 'timeline' })
  $('main').replaceChildren(section('A message’s timeline', form, out))
  if (!q.get('id') && !q.get('key') && !q.get('trace'))
    return out.replaceChildren(
      empty(
        'Find a message by its id or its key (traced messages: failed, held or retried ones, or all with traces: all).',
      ),
    )
  const data = await get(`/api/loops/${encodeURIComponent(state.current.loop)}/messages?${q}`)
  if (data.traces.length === 0)
    return out.replaceChildren(empty('No trace: the message is not traced, or no longer kept.'))
  out.replaceChildren(...data.traces.map((t) => traceView(t)))
}

export function traceView(t) {
  const start = t.transitions[0]?.at ?? 0
  return section(
    `${t.type} ${t.id}`,
    h(
      'p',
      {},
      `state ${t.state}`,
      t.key === undefined ? '' : ` · key ${str(t.key)}`,
      t.routeKey ? ` · route ${t.routeKey}` : '',
      ' · trace ',
      h(
        'a',
        {
          href: `#/${encodeURIComponent(state.current.loop)}/timeline?trace=${encodeURIComponent(t.traceId)}`,
          testid: 'trace-link',
        },
        t.traceId,
      ),
      ' (this message and its follow-ups)',
    ),
    t.attempts.length > 0 ? [h('h3', {}, 'Attempts'), attemptsTable(t.attempts, start)] : undefined,
    h('h3', {}, 'Every step'),
    table(
      [
        { title: 'at', num: true, cell: (s) => `+${ms(s.at - start)}` },
        { title: 'state', cell: (s) => s.state },
        { title: 'attempt', num: true, cell: (s) => s.attempt ?? '' },
        { title: 'detail', cell: (s) => s.detail ?? '' },
      ],
      t.transitions,
      { testid: 'transitions' },
    ),
    t.truncated ? h('p', { className: 'muted' }, `${t.truncated} more steps not kept`) : undefined,
  )
}
