// Where the page is: the hash (#/<loop>/<view>?query), the tabs, the loop picker.
import { h } from './dom.js'
import { $, state, VIEW_TITLES } from './state.js'

export function parseHash() {
  const [path, query] = location.hash.replace(/^#\/?/, '').split('?')
  const [loop, view] = path.split('/').map((p) => {
    try {
      return decodeURIComponent(p ?? '')
    } catch {
      return ''
    }
  })
  const known = state.session.loops.find((l) => l.name === loop) ?? state.session.loops[0]
  state.current = {
    loop: known?.name ?? '',
    view: VIEW_TITLES[view] ? view : 'overview',
    query: new URLSearchParams(query ?? ''),
  }
}

export function go(view, query) {
  const q = query ? `?${new URLSearchParams(query)}` : ''
  location.hash = `#/${encodeURIComponent(state.current.loop)}/${view}${q}`
}

export function renderTabs() {
  const loop = state.session.loops.find((l) => l.name === state.current.loop)
  const views = [...(loop?.views ?? ['overview']), 'timeline']
  $('tabs').replaceChildren(
    ...views.map((v) =>
      h(
        'a',
        {
          href: `#/${encodeURIComponent(state.current.loop)}/${v}`,
          className: v === state.current.view ? 'active' : '',
        },
        VIEW_TITLES[v],
      ),
    ),
  )
  const select = $('loop')
  select.replaceChildren(
    ...state.session.loops.map((l) => h('option', { value: l.name, selected: l.name === state.current.loop }, l.name)),
  )
  $('mode').textContent = state.session.readOnly ? 'read-only' : 'actions allowed'
}
