// The Flowing dashboard page. Plain DOM: every string that comes from the server is set as text
// (textContent, input values), never parsed as HTML — a payload, a type name or an error message
// holding `<script>` shows as those characters. One live stream (Server-Sent Events) per page.

import { h, section } from './dom.js'
import { renderDeadLetters } from './letters.js'
import { go, parseHash, renderTabs } from './navigation.js'
import { renderOverviewShell, updateOverview } from './overview.js'
import { get } from './server.js'
import { $, base, state } from './state.js'
import { renderTimeline } from './timeline.js'
import { renderView, showView } from './views.js'

function connect() {
  state.source?.close()
  const view = state.current.view === 'timeline' ? 'overview' : state.current.view
  const url = `${base}/api/loops/${encodeURIComponent(state.current.loop)}/stream?view=${encodeURIComponent(view)}`
  state.series = [] // a new stream sends the whole history; a reconnect of this one sends what it missed
  state.source = new EventSource(url)
  const live = $('live')
  state.source.addEventListener('open', () => {
    live.textContent = 'live'
    live.className = 'badge live'
  })
  state.source.addEventListener('error', () => {
    live.textContent = 'reconnecting'
    live.className = 'badge reconnecting'
  })
  state.source.addEventListener('tick', (event) => {
    live.textContent = 'live'
    live.className = 'badge live'
    onTick(JSON.parse(event.data))
  })
}

function onTick(tick) {
  state.lastOverview = tick.overview
  for (const p of tick.points) state.series.push(p)
  if (state.series.length > 3600) state.series = state.series.slice(-3600)
  const badge = $('state')
  badge.textContent = tick.overview.state
  badge.className = `badge ${tick.overview.state}`
  if (state.current.view === 'overview') updateOverview(tick.overview)
  else if (state.current.view === 'dead-letters') {
    if (deadMark(tick) !== state.lastDeadMark) renderDeadLetters()
  } else if (state.current.view !== 'timeline' && tick.view === state.current.view && tick.data !== undefined) {
    showView(tick.data)
  }
  state.lastDeadMark = deadMark(tick)
}

// Letters in the store and ever dead-lettered: either changes with a new letter, a replay, a purge.
const deadMark = (tick) => `${tick.overview.deadLetters.count}/${tick.overview.deadLetters.total}`

async function render() {
  try {
    if (state.current.view === 'overview') renderOverviewShell()
    else if (state.current.view === 'dead-letters') await renderDeadLetters()
    else if (state.current.view === 'timeline') await renderTimeline()
    else await renderView()
  } catch (error) {
    $('main').replaceChildren(section('Could not load this view', h('p', {}, error.message)))
  }
}

async function navigate() {
  const before = `${state.current.loop}/${state.current.view}`
  parseHash()
  renderTabs()
  const moved = before !== `${state.current.loop}/${state.current.view}`
  if (moved || !state.source) connect()
  await render()
}

async function main() {
  try {
    state.session = await get('/api/session')
  } catch (error) {
    $('main').replaceChildren(section('Not allowed', h('p', {}, error.message)))
    return
  }
  $('loop').addEventListener('change', (e) => {
    state.current.loop = e.target.value
    go(state.current.view === 'timeline' ? 'overview' : state.current.view)
  })
  window.addEventListener('hashchange', navigate)
  state.render = render
  state.current = { loop: '', view: '', query: new URLSearchParams() }
  await navigate()
}

main()
