import { describe, expect, it } from 'vitest'
import { checkpointsSql } from '../../src/adapters/sql/checkpoints-sql.js'
import { declaredTypesSql } from '../../src/adapters/sql/declared-types-sql.js'
import { POSTGRES, renderSql, SQLITE } from '../../src/adapters/sql/dialect.js'

describe('the SQL dialect seam (docs/architecture.md#sql-shared-between-sqlite-and-postgresql)', () => {
  it('numbers the placeholders in order on PostgreSQL and keeps them on SQLite', () => {
    const text = 'SELECT a FROM t WHERE b = ? AND c > ? ORDER BY a LIMIT ?'
    expect(renderSql(POSTGRES, text)).toBe('SELECT a FROM t WHERE b = $1 AND c > $2 ORDER BY a LIMIT $3')
    expect(renderSql(SQLITE, text)).toBe(text)
    expect(renderSql(POSTGRES, 'SELECT 1')).toBe('SELECT 1')
  })

  it('leaves a ? inside a quoted string or identifier alone', () => {
    expect(renderSql(POSTGRES, `SELECT '?', "a?b" FROM t WHERE x = ? AND y = 'it''s ?' AND z = ?`)).toBe(
      `SELECT '?', "a?b" FROM t WHERE x = $1 AND y = 'it''s ?' AND z = $2`,
    )
  })

  it('refuses a statement with a quote left open', () => {
    expect(() => renderSql(POSTGRES, "SELECT 'a FROM t WHERE x = ?")).toThrow(/' quote is left open/)
  })

  it('names the tables in the schema ocelog on PostgreSQL only, and orders text by bytes', () => {
    expect(SQLITE.table('rm_checkpoints')).toBe('rm_checkpoints')
    expect(POSTGRES.table('rm_checkpoints')).toBe('ocelog.rm_checkpoints')
    expect(SQLITE.byteOrder('n.name')).toBe('n.name')
    expect(POSTGRES.byteOrder('n.name')).toBe('n.name COLLATE "C"')
  })

  it('renders one shared statement into each engine’s text', () => {
    expect(checkpointsSql(SQLITE).position).toBe('SELECT position FROM rm_checkpoints WHERE projector = ?')
    expect(checkpointsSql(POSTGRES).position).toBe('SELECT position FROM ocelog.rm_checkpoints WHERE projector = $1')
    expect(checkpointsSql(POSTGRES).asOf).toBe('(SELECT COALESCE(MIN(position), 0) FROM ocelog.rm_checkpoints)')
    const put = declaredTypesSql(POSTGRES).putAttribute
    expect(put).toContain('INSERT INTO ocelog.rm_declared_attributes AS a')
    expect(put).toContain('VALUES ($1, $2, $3, $4, $5, $6)')
    expect(put).not.toContain('?')
    expect(declaredTypesSql(SQLITE).types).toBe('SELECT kind, name FROM rm_declared_types WHERE dataset_id = ? ORDER BY kind, name')
    expect(declaredTypesSql(POSTGRES).types).toBe(
      'SELECT kind, name FROM ocelog.rm_declared_types WHERE dataset_id = $1 ORDER BY kind COLLATE "C", name COLLATE "C"',
    )
  })
})
