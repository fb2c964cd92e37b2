// The overview: cards, the watermark bar, uPlot charts, rates by type, what happened, the loop's actions.
import { h, ms, num, present, section, table } from './dom.js'
import { act, actionButton, may } from './server.js'
import { $, state } from './state.js'

export function renderOverviewShell() {
  for (const c of state.charts) c.destroy()
  state.charts = []
  const chartBox = h('div', { className: 'charts' })
  $('main').replaceChildren(
    section('Now', h('div', { className: 'cards', id: 'cards', testid: 'cards' })),
    section(
      'Queue depth against the watermarks',
      h('div', { id: 'fill', className: 'fill', testid: 'fill' }),
      h('p', { id: 'fill-text', className: 'muted' }),
    ),
    section('Last minutes', chartBox),
    section('By type and route (messages a second)', h('div', { id: 'types' })),
    h(
      'div',
      { className: 'split' },
      section('What happened', h('ul', { id: 'happenings', className: 'happenings' })),
      section('Loop', h('div', { id: 'loop-actions' })),
    ),
  )
  makeCharts(chartBox)
  renderLoopActions()
  if (state.lastOverview) updateOverview(state.lastOverview)
}

export function makeCharts(box) {
  if (typeof uPlot !== 'function') return
  const specs = [
    [
      'Throughput (a second)',
      [
        ['posted', '#2563eb'],
        ['succeeded', '#15803d'],
        ['failed', '#b45309'],
        ['deadLettered', '#b91c1c'],
      ],
    ],
    [
      'Queue and workers',
      [
        ['queued', '#7c3aed'],
        ['running', '#0891b2'],
        ['workers', '#64748b'],
      ],
    ],
    [
      'Event loop',
      [
        ['delayP99Ms', '#dc2626'],
        ['utilization', '#0d9488'],
      ],
    ],
  ]
  for (const [title, lines] of specs) {
    const holder = h('div', { testid: 'chart', className: 'chart' })
    box.append(holder)
    const opts = {
      title,
      width: Math.max(300, holder.clientWidth - 8),
      height: 180,
      series: [{}, ...lines.map(([label, stroke]) => ({ label, stroke, width: 1.5 }))],
      axes: [{}, { size: 50 }],
    }
    const chart = new uPlot(opts, chartData(lines.map(([l]) => l)), holder)
    chart.lines = lines.map(([l]) => l)
    state.charts.push(chart)
  }
}

export const chartData = (names) => [
  state.series.map((p) => p.t / 1000),
  ...names.map((n) => state.series.map((p) => p[n])),
]

export function updateOverview(o) {
  const cards = $('cards')
  if (!cards) return
  const g = o.gauges
  const p = o.point
  const card = (label, value, id) =>
    h(
      'div',
      { className: 'card', testid: id },
      h('div', { className: 'label' }, label),
      h('div', { className: 'value' }, value),
    )
  cards.replaceChildren(
    card('posted / s', num(p.posted), 'posted-rate'),
    card('succeeded / s', num(p.succeeded), 'succeeded-rate'),
    card('failed / s', num(p.failed)),
    card('dead-lettered / s', num(p.deadLettered)),
    card('succeeded (total)', num(o.counters.succeeded), 'succeeded-total'),
    card('queued', `${g.queued} / ${g.capacity}`, 'queued'),
    card('workers busy', `${g.running} / ${g.workers}`, 'workers'),
    card('busy keys', num(g.busyKeys)),
    card('delayed', num(g.delayed)),
    card('dead letters', num(g.deadLetters), 'dead-letters'),
    card('event-loop delay p99', ms(o.eventLoop.delayP99Ms)),
    card('event-loop utilization', `${Math.round(o.eventLoop.utilization * 100)} %`),
  )
  updateFill(g, o.watermarks)
  const workers = $('workers-input')
  if (workers && document.activeElement !== workers) workers.value = g.workers
  $('types').replaceChildren(
    table(
      [
        { title: 'type', cell: (t) => t.type },
        { title: 'route', cell: (t) => t.route ?? '' },
        ...['posted', 'started', 'succeeded', 'retried', 'failed', 'deadLettered', 'cancelled'].map((k) => ({
          title: k,
          num: true,
          cell: (t) => num(t[k]),
        })),
        { title: '', cell: (t) => (t.sampled ? 'sampled' : 'exact') },
        { title: '', cell: (t) => (o.pausedTypes.includes(t.type) ? 'paused' : (pauseButton(t.type) ?? '')) },
      ],
      o.types,
      { empty: 'no messages in the last second', testid: 'types' },
    ),
    ...present(pausedList(o.pausedTypes)),
  )
  $('happenings').replaceChildren(
    ...o.happenings
      .slice()
      .reverse()
      .map((e) => h('li', {}, h('span', { className: 'muted' }, new Date(e.t).toLocaleTimeString(), ' '), e.text)),
  )
  for (const chart of state.charts) chart.setData(chartData(chart.lines))
}

export function updateFill(g, marks) {
  const fill = $('fill')
  const bar = h('div', { className: `bar ${g.pressure}` })
  bar.style.width = `${Math.min(100, g.fill * 100)}%`
  const markEls = marks.map((m) => {
    const mark = h('div', { className: 'mark' }, h('span', {}, `${Math.round(m * 100)} %`))
    mark.style.left = `${m * 100}%`
    return mark
  })
  fill.replaceChildren(bar, ...markEls)
  $('fill-text').textContent =
    `${(g.fill * 100).toFixed(1)} % full — level ${g.pressure}${g.waitingProducers ? `, ${g.waitingProducers} producers waiting` : ''}`
}

export function renderLoopActions() {
  const box = $('loop-actions')
  const input = h('input', {
    id: 'workers-input',
    type: 'number',
    min: 1,
    max: 4096,
    value: state.lastOverview?.gauges.workers ?? 1,
    ariaLabel: 'workers',
  })
  box.replaceChildren(
    ...present(
      h(
        'div',
        { className: 'row' },
        actionButton('pause', 'Pause loop', () => act('pause', {}, (a) => `Loop ${a.state}`), { testid: 'pause-loop' }),
        actionButton('resume', 'Resume loop', () => act('resume', {}, (a) => `Loop ${a.state}`), {
          testid: 'resume-loop',
        }),
      ),
      may('resize')
        ? h(
            'div',
            { className: 'row' },
            'workers',
            input,
            actionButton(
              'resize',
              'Resize',
              () => act('workers', { workers: Number(input.value) }, (a) => `Workers: ${a.workers}`),
              { testid: 'resize' },
            ),
          )
        : undefined,
      state.session.readOnly
        ? h('p', { className: 'muted' }, 'Read-only: this dashboard takes no actions.')
        : undefined,
    ),
  )
}

// Pausing a type: its messages are admitted but none starts until it resumes.
const pauseButton = (type) =>
  actionButton('pause', 'Pause type', () => act('types/pause', { type }, () => `Type ${type} paused`), {
    testid: 'pause-type',
  })

function pausedList(types) {
  if (types.length === 0) return undefined
  return h(
    'div',
    { className: 'row', testid: 'paused-types' },
    'Paused:',
    ...types.map((type) =>
      h(
        'span',
        {},
        type,
        ' ',
        actionButton('resume', 'Resume', () => act('types/resume', { type }, () => `Type ${type} resumed`), {
          testid: 'resume-type',
        }),
      ),
    ),
  )
}
