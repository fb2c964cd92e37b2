import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const childPath = fileURLToPath(new URL('./exit-after-stop-child.ts', import.meta.url))

describe('Loop', () => {
  describe('stop()', () => {
    it('leaves no timer that keeps a real process alive once it resolved (a zombie in its grace period)', async () => {
      // `@flowing/source` resolves the workspace packages to their sources, as vitest does.
      const child = spawn(process.execPath, ['--conditions=@flowing/source', '--import', 'tsx', childPath], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      try {
        const exitMs = await new Promise<number>((resolve, reject) => {
          let stoppedAt: number | undefined
          const limit = setTimeout(() => reject(new Error(`no exit within 4 s\n${stderr}`)), 4_000)
          child.stdout.on('data', (chunk: Buffer) => {
            if (chunk.toString().includes('stopped')) stoppedAt = performance.now()
          })
          child.once('exit', (code) => {
            clearTimeout(limit)
            if (stoppedAt === undefined || code !== 0) reject(new Error(`exited ${code} before stop\n${stderr}`))
            else resolve(performance.now() - stoppedAt)
          })
        })
        expect(exitMs).toBeLessThan(1_000) // not the 5 s grace period, not the 30 s stall check
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      }
    }, 8_000)
  })
})
