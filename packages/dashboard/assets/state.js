// The page's shared state: the session, where the page is, the live stream and what it received.
// Every module reads and writes it here (one object: a module's bindings cannot be reassigned from outside).

/** The dashboard's base path (the page is served at `<base>/`). */
export const base = location.pathname.replace(/\/(index\.html)?$/, '')
/** The element of that id. */
export const $ = (id) => document.getElementById(id)
/** The views' titles, by name. */
export const VIEW_TITLES = {
  overview: 'Overview',
  keys: 'Keys and groups',
  flow: 'Breakers and limits',
  delayed: 'Delayed and scheduled',
  'dead-letters': 'Dead letters',
  timeline: 'Timeline',
  threads: 'Threads',
  nats: 'NATS',
}

export const state = {
  session: { readOnly: true, actions: {}, loops: [], csrf: '' },
  current: { loop: '', view: 'overview', query: new URLSearchParams() },
  source: undefined,
  charts: [],
  series: [],
  lastOverview: undefined,
  lastDeadMark: undefined,
  inspected: undefined,
  letterSelection: new Set(),
  // Draws the current view again (app.js sets it: an action's answer redraws).
  render: async () => {},
}
