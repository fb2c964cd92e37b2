/**
 * Failure bookkeeping is total (defect 1): whatever a handler throws, classifying and describing it
 * never throws and yields plain, JSON-serializable data.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ErrorCause, ErrorInfo } from '../../src/contracts/failures.js'
import { classify, defaultClassify, errorInfo } from '../../src/failure/classify.js'
import { describeValue, type Message, type MessageMap } from '../../src/index.js'
import { HOSTILE_CASES, hostileOrAnything, hostileValue } from '../hostile.js'

const CLASSES = ['retryable', 'non-retryable', 'unknown'] as const
const message = { type: 'work', payload: 1 } as unknown as Message<MessageMap>

/** The violations of ErrorInfo's shape in `info` (empty when well-formed). */
function malformed(info: ErrorCause, depth = 0): string[] {
  const problems: string[] = []
  if (typeof info.name !== 'string') problems.push('name')
  if (typeof info.message !== 'string') problems.push('message')
  if (info.code !== undefined && typeof info.code !== 'string') problems.push('code')
  if (info.stack !== undefined && !(typeof info.stack === 'string' && info.stack.length <= 4096)) problems.push('stack')
  if (info.cause !== undefined) {
    if (depth >= 5) problems.push('cause deeper than 5')
    else problems.push(...malformed(info.cause, depth + 1))
  }
  return problems
}

function checkInfo(info: ErrorInfo): void {
  expect(malformed(info)).toEqual([])
  expect(CLASSES).toContain(info.errorClass)
  expect(typeof info.signature === 'string' && info.signature.length <= 160).toBe(true)
  expect(JSON.parse(JSON.stringify(info))).toEqual(info) // plain data: survives a dead-letter sink
}

describe('classify', () => {
  describe('defaultClassify()', () => {
    it('never throws and returns a class, whatever was thrown', () => {
      fc.assert(
        fc.property(hostileOrAnything(), (thrown) => {
          expect(CLASSES).toContain(defaultClassify(thrown.make()))
        }),
      )
    })
  })

  describe('classify()', () => {
    it('never throws, even when the classifier throws or returns a hostile value', () => {
      const classifier = fc.oneof(
        hostileOrAnything().map((answer) => () => answer.make() as never),
        hostileValue().map((thrown) => () => {
          throw thrown.make()
        }),
      )
      fc.assert(
        fc.property(hostileOrAnything(), classifier, (thrown, c) => {
          expect(CLASSES).toContain(classify(c, thrown.make(), message))
        }),
      )
    })
  })

  describe('errorInfo()', () => {
    it('never throws and returns a well-formed, JSON-serializable ErrorInfo', () => {
      fc.assert(
        fc.property(hostileOrAnything(), fc.constantFrom(...CLASSES), (thrown, errorClass) =>
          checkInfo(errorInfo(thrown.make(), errorClass)),
        ),
      )
    })

    it.each(HOSTILE_CASES)('describes %s', (_name, make) => {
      const info = errorInfo(make(), defaultClassify(make()))
      checkInfo(info)
      expect(info.name.length + info.message.length).toBeGreaterThan(0)
    })

    it('reports what cannot be read as Error / [unprintable value]', () => {
      const error = new Error('x')
      Object.defineProperty(error, 'message', {
        get() {
          throw new Error('getter')
        },
      })
      expect(errorInfo(error, 'unknown')).toMatchObject({ name: 'Error', message: '[unprintable value]' })
      const trap = () => {
        throw new Error('trap')
      }
      expect(errorInfo({ toString: trap }, 'unknown').message).toBe('non-error thrown: `[object]` (object)')
      expect(errorInfo(Symbol('s'), 'unknown').message).toBe('non-error thrown: Symbol(s)')
      expect(errorInfo('boom', 'unknown').message).toBe('non-error thrown: boom')
    })

    it('keeps the stack and the cause chain, bounded at 5 levels and cut at a cycle', () => {
      const root = Object.assign(new Error('root', { cause: 'a string cause' }), { code: 'ECONNRESET' })
      const info = errorInfo(new TypeError('outer', { cause: root }), 'unknown')
      expect(info.stack).toContain('TypeError: outer')
      expect(info.cause).toMatchObject({
        name: 'Error',
        message: 'root',
        code: 'ECONNRESET',
        cause: { name: 'Error', message: 'non-error thrown: a string cause' },
      })
      let deep: Error = new Error('level 0')
      for (let i = 1; i <= 20; i++) deep = new Error(`level ${i}`, { cause: deep })
      let depth = 0
      for (let c = errorInfo(deep, 'unknown').cause; c !== undefined; c = c.cause) depth++
      expect(depth).toBe(5)
      const a = new Error('a')
      const b = new Error('b', { cause: a })
      Object.defineProperty(a, 'cause', { value: b })
      expect(errorInfo(a, 'unknown').cause).toEqual(expect.objectContaining({ message: 'b' }))
      expect(errorInfo(a, 'unknown').cause?.cause).toBeUndefined()
    })
  })
})

describe('describeValue()', () => {
  it('never throws for a hostile value', () => {
    fc.assert(
      fc.property(hostileOrAnything(), (thrown) => {
        expect(describeValue(thrown.make())).toMatch(/^`.*` \(\w+\)$/s)
      }),
    )
  })
})
