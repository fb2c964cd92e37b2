// The views fed by the live stream: keys and groups, breakers and limits, delayed and scheduled, threads, NATS.
import { h, ms, section, str, table } from './dom.js'
import { act, actionButton, get } from './server.js'
import { $, state } from './state.js'

export const timelineLink = (id) =>
  h('a', { href: `#/${encodeURIComponent(state.current.loop)}/timeline?id=${encodeURIComponent(id)}` }, id)

export const VIEWS = {
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

export async function renderView() {
  const data = await get(`/api/loops/${encodeURIComponent(state.current.loop)}/${state.current.view}`)
  showView(data)
}

// A view's data, or the error the server sent instead.
export function showView(data) {
  if (data && typeof data === 'object' && !Array.isArray(data) && typeof data.error === 'string') {
    $('main').replaceChildren(section('Could not read this view', h('p', {}, data.error)))
  } else VIEWS[state.current.view]?.(data)
}
