// The Flowing dashboard page. Plain DOM: every string that comes from the server is set as text
// (textContent, input values), never parsed as HTML — a payload, a type name or an error message
// holding `<script>` shows as those characters. One live stream (Server-Sent Events) per page.

const base = location.pathname.replace(/\/(index\.html)?$/, '')
const $ = (id) => document.getElementById(id)
const VIEW_TITLES = {
  overview: 'Overview',
  keys: 'Keys and groups',
  flow: 'Breakers and limits',
  delayed: 'Delayed and scheduled',
  'dead-letters': 'Dead letters',
  timeline: 'Timeline',
  threads: 'Threads',
  nats: 'NATS',
}

let session = { readOnly: true, actions: {}, loops: [], csrf: '' }
let current = { loop: '', view: 'overview', query: new URLSearchParams() }
let source
let charts = []
let series = []
let lastOverview
let lastDeadMark
let inspected
let letterSelection = new Set()

// ── DOM helpers ──────────────────────────────────────────────────────────────────────────────────

// h('td', { className: 'num' }, 'text', child): an element; strings become text nodes.
function h(tag, props, ...children) {
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
function submit(event, run) {
  event.preventDefault()
  run()
}

// The children that are there (replaceChildren would show `undefined` as text).
const present = (...children) => children.filter((c) => c !== undefined && c !== null && c !== false)
const section = (title, ...children) => h('section', {}, h('h2', {}, title), ...children)
const empty = (text) => h('p', { className: 'empty' }, text)
const num = (n, digits = 1) =>
  typeof n === 'number' && Number.isFinite(n) ? (Number.isInteger(n) ? n : n.toFixed(digits)) : '—'
const ms = (n) => (typeof n !== 'number' ? '—' : n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(1)} s`)
const str = (v) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v))

function table(columns, rows, options = {}) {
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

function notice(text, ok = false) {
  const n = $('notice')
  n.textContent = text
  n.className = ok ? 'notice ok' : 'notice'
  n.hidden = false
  clearTimeout(notice.timer)
  notice.timer = setTimeout(() => (n.hidden = true), 6000)
}

// ── the server ───────────────────────────────────────────────────────────────────────────────────

async function get(path) {
  const res = await fetch(`${base}${path}`, { credentials: 'same-origin', headers: { accept: 'application/json' } })
  const body = await res.json().catch(() => ({}))
  if (!res.ok) throw new Error(body.error?.message ?? `HTTP ${res.status}`)
  return body
}

const may = (action) => session.actions?.[action] === true

async function act(path, body, done) {
  try {
    const res = await fetch(`${base}/api/loops/${encodeURIComponent(current.loop)}/${path}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-flowing-csrf': session.csrf },
      body: JSON.stringify(body ?? {}),
    })
    const answer = await res.json().catch(() => ({}))
    if (!res.ok) throw new Error(answer.error?.message ?? `HTTP ${res.status}`)
    notice(done(answer), true)
    render()
  } catch (error) {
    notice(`Refused: ${error.message}`)
  }
}

function actionButton(action, label, run, options = {}) {
  if (!may(action)) return undefined
  return h(
    'button',
    { type: 'button', className: options.danger ? 'danger' : '', testid: options.testid, onclick: run },
    label,
  )
}

// ── navigation ───────────────────────────────────────────────────────────────────────────────────

function parseHash() {
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?')
  const [loop, view] = path.split('/').map((p) => {
    try {
      return decodeURIComponent(p ?? '')
    } catch {
      return ''
    }
  })
  const known = session.loops.find((l) => l.name === loop) ?? session.loops[0]
  current = {
    loop: known?.name ?? '',
    view: VIEW_TITLES[view] ? view : 'overview',
    query: new URLSearchParams(query ?? ''),
  }
}

function go(view, query) {
  const q = query ? `?${new URLSearchParams(query)}` : ''
  location.hash = `#/${encodeURIComponent(current.loop)}/${view}${q}`
}

function renderTabs() {
  const loop = session.loops.find((l) => l.name === current.loop)
  const views = [...(loop?.views ?? ['overview']), 'timeline']
  $('tabs').replaceChildren(
    ...views.map((v) =>
      h(
        'a',
        { href: `#/${encodeURIComponent(current.loop)}/${v}`, className: v === current.view ? 'active' : '' },
        VIEW_TITLES[v],
      ),
    ),
  )
  const select = $('loop')
  select.replaceChildren(
    ...session.loops.map((l) => h('option', { value: l.name, selected: l.name === current.loop }, l.name)),
  )
  $('mode').textContent = session.readOnly ? 'read-only' : 'actions allowed'
}

// ── the live stream ──────────────────────────────────────────────────────────────────────────────

function connect() {
  source?.close()
  const view = current.view === 'timeline' ? 'overview' : current.view
  const url = `${base}/api/loops/${encodeURIComponent(current.loop)}/stream?view=${encodeURIComponent(view)}`
  series = [] // a new stream sends the whole history; a reconnect of this one sends what it missed
  source = new EventSource(url)
  const live = $('live')
  source.addEventListener('open', () => {
    live.textContent = 'live'
    live.className = 'badge live'
  })
  source.addEventListener('error', () => {
    live.textContent = 'reconnecting'
    live.className = 'badge reconnecting'
  })
  source.addEventListener('tick', (event) => {
    live.textContent = 'live'
    live.className = 'badge live'
    onTick(JSON.parse(event.data))
  })
}

function onTick(tick) {
  lastOverview = tick.overview
  for (const p of tick.points) series.push(p)
  if (series.length > 3600) series = series.slice(-3600)
  const state = $('state')
  state.textContent = tick.overview.state
  state.className = `badge ${tick.overview.state}`
  if (current.view === 'overview') updateOverview(tick.overview)
  else if (current.view === 'dead-letters') {
    if (deadMark(tick) !== lastDeadMark) renderDeadLetters()
  } else if (current.view !== 'timeline' && tick.view === current.view && tick.data !== undefined) {
    showView(tick.data)
  }
  lastDeadMark = deadMark(tick)
}

// Letters in the store and ever dead-lettered: either changes with a new letter, a replay, a purge.
const deadMark = (tick) => `${tick.overview.deadLetters.count}/${tick.overview.deadLetters.total}`

// A view's data, or the error the server sent instead.
function showView(data) {
  if (data && typeof data === 'object' && !Array.isArray(data) && typeof data.error === 'string') {
    $('main').replaceChildren(section('Could not read this view', h('p', {}, data.error)))
  } else VIEWS[current.view]?.(data)
}

// ── overview ─────────────────────────────────────────────────────────────────────────────────────

function renderOverviewShell() {
  for (const c of charts) c.destroy()
  charts = []
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
  if (lastOverview) updateOverview(lastOverview)
}

function makeCharts(box) {
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
    charts.push(chart)
  }
}

const chartData = (names) => [series.map((p) => p.t / 1000), ...names.map((n) => series.map((p) => p[n]))]

function updateOverview(o) {
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
      ],
      o.types,
      { empty: 'no messages in the last second', testid: 'types' },
    ),
  )
  $('happenings').replaceChildren(
    ...o.happenings
      .slice()
      .reverse()
      .map((e) => h('li', {}, h('span', { className: 'muted' }, new Date(e.t).toLocaleTimeString(), ' '), e.text)),
  )
  for (const chart of charts) chart.setData(chartData(chart.lines))
}

function updateFill(g, marks) {
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

function renderLoopActions() {
  const box = $('loop-actions')
  const input = h('input', {
    id: 'workers-input',
    type: 'number',
    min: 1,
    max: 4096,
    value: lastOverview?.gauges.workers ?? 1,
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
      session.readOnly ? h('p', { className: 'muted' }, 'Read-only: this dashboard takes no actions.') : undefined,
    ),
  )
}

// ── keys, flow, delayed, threads, nats ───────────────────────────────────────────────────────────

const timelineLink = (id) =>
  h('a', { href: `#/${encodeURIComponent(current.loop)}/timeline?id=${encodeURIComponent(id)}` }, id)

const VIEWS = {
  keys(data) {
    $('main').replaceChildren(
      section(
        `Busiest and blocked keys (${data.busyKeys} held now)`,
        table(
          [
            { title: 'key', cell: (l) => str(l.key) },
            { title: 'held by', cell: (l) => (l.holder ? timelineLink(l.holder.id) : '—') },
            { title: 'type', cell: (l) => l.holder?.type ?? '' },
            { title: 'state', cell: (l) => l.holder?.state ?? '' },
            { title: 'for', num: true, cell: (l) => (l.holder ? ms(data.at - l.holder.since) : '') },
            { title: 'waiting behind', num: true, cell: (l) => l.waiting },
          ],
          data.keys,
          { empty: 'no key is held', testid: 'keys' },
        ),
      ),
      section(
        'Running now',
        table(
          [
            { title: 'message', cell: (r) => timelineLink(r.id) },
            { title: 'type', cell: (r) => r.type },
            { title: 'key', cell: (r) => str(r.key) },
            { title: 'attempt', num: true, cell: (r) => r.attempt },
            { title: 'for', num: true, cell: (r) => ms(data.at - r.startedAt) },
          ],
          data.running,
          { empty: 'nothing runs' },
        ),
      ),
      section(
        'Key groups',
        table(
          [
            { title: 'group', cell: (g) => g.group },
            { title: 'running', num: true, cell: (g) => `${g.running} / ${g.limit}` },
            { title: 'waiting', num: true, cell: (g) => g.waiting },
          ],
          data.groups,
          { empty: 'no group is busy' },
        ),
      ),
    )
  },
  flow(data) {
    const open = (c) =>
      actionButton('close-circuit', 'Close', () =>
        act(
          'circuits/close',
          {
            type: c.route.split(':')[0],
            ...(c.route.includes(':') ? { routeKey: c.route.slice(c.route.indexOf(':') + 1) } : {}),
          },
          () => `Breaker ${c.route} closed`,
        ),
      )
    $('main').replaceChildren(
      section(
        'Circuit breakers not closed',
        table(
          [
            { title: 'route', cell: (c) => c.route },
            { title: 'state', cell: (c) => h('span', { className: `state-${c.state}` }, c.state) },
            { title: 'messages held', num: true, cell: (c) => c.held },
            { title: '', cell: (c) => open(c) ?? '' },
          ],
          data.circuits,
          { empty: 'every breaker is closed', testid: 'circuits' },
        ),
      ),
      section(
        'Breaker history',
        table(
          [
            { title: 'when', cell: (e) => new Date(e.t).toLocaleTimeString() },
            { title: 'what', cell: (e) => e.text },
          ],
          data.history.slice().reverse(),
          { empty: 'no breaker changed yet' },
        ),
      ),
      section(
        `Rate limits (${data.rateLimited} waits so far)`,
        table(
          [
            { title: 'limit', cell: (l) => l.name },
            { title: 'scope', cell: (l) => l.scope },
            { title: 'used', num: true, cell: (l) => `${l.used} / ${l.max}` },
            { title: 'window', num: true, cell: (l) => ms(l.windowMs) },
            { title: 'waiting', num: true, cell: (l) => l.waiting },
            {
              title: 'paused until',
              num: true,
              cell: (l) => (l.until === undefined ? '' : `in ${ms(l.until - data.at)}`),
            },
          ],
          data.limits,
          { empty: 'no rate limit is in use', testid: 'limits' },
        ),
      ),
    )
  },
  delayed(data) {
    $('main').replaceChildren(
      section(
        `Schedules (${data.schedules.length})`,
        table(
          [
            { title: 'id', cell: (s) => s.id },
            { title: 'type', cell: (s) => s.type },
            { title: 'spec', cell: (s) => str(s.spec) },
            { title: 'next fire', cell: (s) => (s.nextAt === undefined ? '—' : `in ${ms(s.nextAt - data.now)}`) },
            { title: 'runs', num: true, cell: (s) => s.runs },
            {
              title: '',
              cell: (s) =>
                (s.paused
                  ? actionButton('resume', 'Resume', () =>
                      act('schedules/resume', { id: s.id }, () => `Schedule ${s.id} resumed`),
                    )
                  : actionButton('pause', 'Pause', () =>
                      act('schedules/pause', { id: s.id }, () => `Schedule ${s.id} paused`),
                    )) ?? (s.paused ? 'paused' : ''),
            },
          ],
          data.schedules,
          { empty: 'no schedules', testid: 'schedules' },
        ),
      ),
      section(
        `Keyed delays (${data.keyed} keys; ${data.delayed} delayed messages in all)`,
        table(
          [
            { title: 'job key', cell: (j) => j.jobKey },
            { title: 'type', cell: (j) => j.type },
            { title: 'message', cell: (j) => timelineLink(j.id) },
            { title: 'state', cell: (j) => j.state },
            { title: 'due', cell: (j) => (j.dueAt === undefined ? 'now' : `in ${ms(j.dueAt - data.now)}`) },
            {
              title: '',
              cell: (j) =>
                actionButton('cancel', 'Cancel', () =>
                  act('jobs/cancel', { jobKey: j.jobKey }, (a) => `${j.jobKey}: ${a.result}`),
                ) ?? '',
            },
          ],
          data.jobs,
          { empty: 'no keyed delays', testid: 'jobs' },
        ),
      ),
    )
  },
  threads(data) {
    $('main').replaceChildren(
      section(
        'Thread pools',
        table(
          [
            { title: 'pool', cell: (p) => p.name },
            { title: 'threads', num: true, cell: (p) => p.stats.threads },
            { title: 'queued', num: true, cell: (p) => p.stats.queued },
            { title: 'utilization', num: true, cell: (p) => `${Math.round((p.stats.utilization ?? 0) * 100)} %` },
            {
              title: 'run p50 / p99',
              num: true,
              cell: (p) => `${ms(p.stats.runTime?.p50)} / ${ms(p.stats.runTime?.p99)}`,
            },
            {
              title: 'wait p50 / p99',
              num: true,
              cell: (p) => `${ms(p.stats.waitTime?.p50)} / ${ms(p.stats.waitTime?.p99)}`,
            },
          ],
          data,
          { empty: 'no thread pool', testid: 'threads' },
        ),
      ),
    )
  },
  nats(data) {
    const rows = Object.entries(data ?? {}).filter(([, v]) => typeof v !== 'object' || Array.isArray(v))
    $('main').replaceChildren(
      section(
        'NATS: this process',
        table(
          [
            { title: 'counter', cell: ([k]) => k },
            { title: 'value', cell: ([, v]) => str(v) },
          ],
          rows,
          { testid: 'nats' },
        ),
      ),
    )
  },
}

async function renderView() {
  const data = await get(`/api/loops/${encodeURIComponent(current.loop)}/${current.view}`)
  showView(data)
}

// ── dead letters ─────────────────────────────────────────────────────────────────────────────────

function letterFilterForm() {
  const q = current.query
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

function letterQuery(now) {
  const q = current.query
  const params = new URLSearchParams()
  for (const name of ['type', 'errorClass']) if (q.get(name)) params.set(name, q.get(name))
  if (q.get('within')) params.set('since', String(now - Number(q.get('within'))))
  return params
}

async function renderDeadLetters() {
  const probe = await get(`/api/loops/${encodeURIComponent(current.loop)}/dead-letters?limit=1`)
  const params = letterQuery(probe.now)
  const data = await get(`/api/loops/${encodeURIComponent(current.loop)}/dead-letters?${params}`)
  letterSelection = new Set([...letterSelection].filter((id) => data.letters.some((l) => l.id === id)))
  const filter = Object.fromEntries(params)
  const detail = h('div', { id: 'letter', testid: 'letter' }, empty('Pick a letter to inspect it.'))
  const pickBox = (l) =>
    h('input', {
      type: 'checkbox',
      checked: letterSelection.has(l.id),
      ariaLabel: `select ${l.id}`,
      onchange: (e) => (e.target.checked ? letterSelection.add(l.id) : letterSelection.delete(l.id)),
    })
  const bulk = h(
    'div',
    { className: 'row' },
    actionButton(
      'replay',
      'Replay selected',
      () => letterSelection.size && act('dead-letters/replay', { ids: [...letterSelection] }, replayed),
      { testid: 'replay-selected' },
    ),
    actionButton(
      'purge',
      'Purge selected',
      () =>
        confirmThen(`Purge ${letterSelection.size} dead letters?`, () =>
          act('dead-letters/purge', { ids: [...letterSelection] }, purged),
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
  const again = data.letters.findIndex((l) => l.id === inspected)
  const row = again < 0 ? undefined : $('main').querySelector('[data-testid="letters"] tbody')?.rows[again]
  if (row) await showLetter(data.letters[again], detail, row)
}

const replayed = (a) =>
  `Replayed ${a.replayed.length}${a.refused.length ? `, refused ${a.refused.length}: ${a.refused[0].error}` : ''}`
const purged = (a) => `Purged ${a.purged}`

function confirmThen(question, run) {
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

function errorBlock(e) {
  const head = `${e.name}: ${e.message}`
  const stack = e.stack?.startsWith(head) ? e.stack.slice(head.length) : e.stack ? `\n${e.stack}` : ''
  const out = [h('pre', { testid: 'letter-error' }, `${head}${e.code ? ` [${e.code}]` : ''}${stack}`)]
  if (e.cause) out.push(h('p', { className: 'muted' }, 'caused by'), ...errorBlock(e.cause))
  return out
}

async function showLetter(summary, detail, tr) {
  inspected = summary.id
  for (const row of tr.parentElement.children) row.classList.remove('chosen')
  tr.classList.add('chosen')
  let l
  try {
    l = (await get(`/api/loops/${encodeURIComponent(current.loop)}/dead-letters/${encodeURIComponent(summary.id)}`))
      .letter
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

function attemptsTable(attempts) {
  return table(
    [
      { title: '#', num: true, cell: (a) => a.attempt },
      { title: 'outcome', cell: (a) => a.outcome },
      { title: 'duration', num: true, cell: (a) => ms(a.durationMs) },
      { title: 'error', cell: (a) => (a.error ? `${a.error.name}: ${a.error.message}` : '') },
    ],
    attempts,
    { empty: 'no finished attempt' },
  )
}

// ── a message's timeline ─────────────────────────────────────────────────────────────────────────

async function renderTimeline() {
  const q = current.query
  const input = h('input', {
    name: 'find',
    placeholder: 'message id or key',
    value: q.get('id') ?? q.get('key') ?? '',
    ariaLabel: 'message id or key',
    size: 40,
  })
  const by = h(
    'select',
    { ariaLabel: 'find by' },
    h('option', { value: 'id', selected: !q.get('key') }, 'by id'),
    h('option', { value: 'key', selected: !!q.get('key') }, 'by key'),
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
  if (!q.get('id') && !q.get('key'))
    return out.replaceChildren(
      empty(
        'Find a message by its id or its key (traced messages: failed, held or retried ones, or all with traces: all).',
      ),
    )
  const data = await get(`/api/loops/${encodeURIComponent(current.loop)}/messages?${q}`)
  if (data.traces.length === 0)
    return out.replaceChildren(empty('No trace: the message is not traced, or no longer kept.'))
  out.replaceChildren(...data.traces.map((t) => traceView(t)))
}

function traceView(t) {
  const start = t.transitions[0]?.at ?? 0
  return section(
    `${t.type} ${t.id}`,
    h(
      'p',
      {},
      `state ${t.state}`,
      t.key === undefined ? '' : ` · key ${str(t.key)}`,
      t.routeKey ? ` · route ${t.routeKey}` : '',
      ` · trace ${t.traceId}`,
    ),
    t.attempts.length > 0 ? [h('h3', {}, 'Attempts'), attemptsTable(t.attempts)] : undefined,
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

// ── main ─────────────────────────────────────────────────────────────────────────────────────────

async function render() {
  try {
    if (current.view === 'overview') renderOverviewShell()
    else if (current.view === 'dead-letters') await renderDeadLetters()
    else if (current.view === 'timeline') await renderTimeline()
    else await renderView()
  } catch (error) {
    $('main').replaceChildren(section('Could not load this view', h('p', {}, error.message)))
  }
}

async function navigate() {
  const before = `${current.loop}/${current.view}`
  parseHash()
  renderTabs()
  const moved = before !== `${current.loop}/${current.view}`
  if (moved || !source) connect()
  await render()
}

async function main() {
  try {
    session = await get('/api/session')
  } catch (error) {
    $('main').replaceChildren(section('Not allowed', h('p', {}, error.message)))
    return
  }
  $('loop').addEventListener('change', (e) => {
    current.loop = e.target.value
    go(current.view === 'timeline' ? 'overview' : current.view)
  })
  window.addEventListener('hashchange', navigate)
  current = { loop: '', view: '', query: new URLSearchParams() }
  await navigate()
}

main()
