/** The RateLimiter contract on the in-memory limiter (embedded default; src/adapters/rate-limiter.ts). */
import { memoryRateLimiter } from '../../src/adapters/rate-limiter.js'
import { rateLimiterContract } from './rate-limiter.contract.js'

rateLimiterContract('in memory', async (budget) => memoryRateLimiter(budget))
