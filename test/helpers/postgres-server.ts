/** The PostgreSQL server of the tests: the bench's harness (bench/postgres-server.ts), shared so that both start it one way. */
export * from '../../bench/postgres-server.js'
