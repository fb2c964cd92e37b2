import { describe, expect, it } from 'vitest'
import { bar, createProgress } from '../src/progress.js'

function stream(isTTY: boolean) {
  const writes: string[] = []
  return { writes, isTTY, columns: 60, write: (text: string) => writes.push(text) }
}

describe('progress', () => {
  it('draws a bar in place on a TTY and keeps the result lines', () => {
    const s = stream(true)
    const progress = createProgress(s)
    progress.step('1 worker, warm-up', 0, 4)
    progress.step('1 worker, trial 1/1', 1, 4)
    progress.line('    1 worker: 100/s, p99 5.0 ms')
    progress.end()
    expect(s.writes[0]).toBe(
      '[......................] 0/4  1 worker, warm-up'.replace('......................', '.'.repeat(24)),
    )
    expect(s.writes[1]).toBe('\r\x1b[2K') // the old bar cleared before the next is drawn
    expect(s.writes[2]).toMatch(/^\[#{6}\.{18}\] 1\/4 {2}1 worker, trial 1\/1$/)
    expect(s.writes.slice(3)).toEqual(['\r\x1b[2K', '    1 worker: 100/s, p99 5.0 ms\n'])
  })

  it('writes plain lines, and no bar, when the stream is not a TTY', () => {
    const s = stream(false)
    const progress = createProgress(s)
    progress.step('1 worker, warm-up', 0, 4)
    progress.line('    1 worker: 100/s, p99 5.0 ms')
    progress.end()
    expect(s.writes).toEqual(['    1 worker: 100/s, p99 5.0 ms\n'])
  })

  it('cuts the bar to the terminal width', () => {
    expect(bar('a very long label '.repeat(10), 3, 6, 40)).toHaveLength(39)
    expect(bar('x', 6, 6, 80)).toBe(`[${'#'.repeat(24)}] 6/6  x`)
  })
})
