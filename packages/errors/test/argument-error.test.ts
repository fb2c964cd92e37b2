import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ArgumentError, FlowingError, flowingErrorBrand, flowingErrorFamilies, isFlowingError } from '../src/index.js'
import { anyValue, hostileValues } from './hostile-values.js'

class PoolError extends FlowingError {}
class PoolArgumentError extends ArgumentError {
  static readonly [flowingErrorFamilies] = [PoolError]
  static override readonly code = 'ERR_POOL_INVALID_ARGUMENT'
}
class SizeArgumentError extends PoolArgumentError {}

const SHAPE =
  /^Expected `[^`]*` to be [^\n]*, got `[\s\S]*` \((string|number|bigint|boolean|symbol|undefined|object|function|null|array)\)(; .*)?$/

describe('ArgumentError', () => {
  describe('constructor()', () => {
    it('states the argument, the rule and the quoted value in the one shape, and keeps each as a field', () => {
      const error = new PoolArgumentError('options.size', 'an integer from 1 to 64', 0)
      expect(error.message).toBe('Expected `options.size` to be an integer from 1 to 64, got `0` (number)')
      expect([error.code, error.name, error.argument, error.rule, error.value, error.hint]).toEqual([
        'ERR_POOL_INVALID_ARGUMENT',
        'PoolArgumentError',
        'options.size',
        'an integer from 1 to 64',
        0,
        undefined,
      ])
      expect('hint' in error).toBe(false)
    })

    it('takes its code from the class: the static code of the class or of its nearest parent', () => {
      expect(new ArgumentError('x', 'r', 1).code).toBe('ERR_INVALID_ARGUMENT')
      expect(new SizeArgumentError('x', 'r', 1).code).toBe('ERR_POOL_INVALID_ARGUMENT')
      expect(new SizeArgumentError('x', 'r', 1).name).toBe('SizeArgumentError')
    })

    it('appends a hint after a semicolon and keeps the cause', () => {
      const cause = new Error('getter threw')
      const error = new PoolArgumentError('options.sise', 'one of the known options (size)', 4, {
        hint: 'did you mean `size`?',
        cause,
      })
      expect(error.message).toBe(
        'Expected `options.sise` to be one of the known options (size), got `4` (number); did you mean `size`?',
      )
      expect([error.hint, error.cause]).toEqual(['did you mean `size`?', cause])
    })

    it('describes any value, hostile ones too, without throwing', () => {
      for (const value of hostileValues()) {
        const error = new PoolArgumentError('x', 'a rule', value)
        expect(error.message).toMatch(SHAPE)
        expect(error.value).toBe(value)
      }
      fc.assert(
        fc.property(anyValue, fc.string(), fc.option(fc.string(), { nil: undefined }), (make, rule, hint) => {
          const value = make()
          const error = new PoolArgumentError('options.x', rule.replace(/\n/g, ' '), value, { hint })
          expect(error.message.startsWith(`Expected \`options.x\` to be ${rule.replace(/\n/g, ' ')}, got \``)).toBe(
            true,
          )
          expect(error.message.endsWith(hint === undefined ? ')' : `; ${hint}`)).toBe(true)
          expect(error).toBeInstanceOf(ArgumentError)
        }),
      )
    })
  })

  describe('[flowingErrorFamilies]', () => {
    it('makes a package argument error an instance of its package family as well as of ArgumentError', () => {
      const error = new SizeArgumentError('size', 'an integer ≥ 1', -1)
      for (const cls of [SizeArgumentError, PoolArgumentError, PoolError, ArgumentError, FlowingError, Error]) {
        expect(error).toBeInstanceOf(cls)
      }
      expect(new PoolError('ERR_POOL', 'other') instanceof ArgumentError).toBe(false)
      expect((error as unknown as Record<symbol, unknown>)[flowingErrorBrand]).toEqual([
        'SizeArgumentError',
        'PoolArgumentError',
        'PoolError',
        'ArgumentError',
        'FlowingError',
      ])
    })

    it('holds across copies: a foreign error whose brand names the family is an instance of it', () => {
      const foreign = Object.defineProperty(new Error('other copy'), flowingErrorBrand, {
        value: Object.freeze(['PoolArgumentError', 'PoolError', 'ArgumentError', 'FlowingError']),
      })
      expect([foreign instanceof PoolError, foreign instanceof ArgumentError, isFlowingError(foreign)]).toEqual([
        true,
        true,
        true,
      ])
    })

    it('ignores a family list that is not a list of classes', () => {
      class Odd extends ArgumentError {
        static readonly [flowingErrorFamilies] = 'PoolError'
      }
      const error = new Odd('x', 'r', 1)
      expect(error instanceof PoolError).toBe(false)
      expect((error as unknown as Record<symbol, unknown>)[flowingErrorBrand]).toEqual([
        'Odd',
        'ArgumentError',
        'FlowingError',
      ])
    })
  })
})
